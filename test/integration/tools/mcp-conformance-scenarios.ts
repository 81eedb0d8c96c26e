/**
 * The official MCP conformance suite's server scenarios (@modelcontextprotocol/conformance 0.1.12,
 * the last release that runs on Node 20), in one place: those that apply to any server and must
 * pass against a device's tool server and the hub's /mcp, and those that do not apply, with why.
 * mcp-conformance.test.ts checks that this table names every scenario the suite lists, so a new
 * scenario of a later version is classified before it is run or left out.
 */

/** Scenarios that need nothing a Lookout server does not offer: run against both, each must pass. */
export const APPLICABLE_SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'] as const;

/** The suite's reference test tools (test_simple_text, test_image_content…) that no Lookout server has. */
const NEEDS_REFERENCE_TOOLS = 'calls one of the suite’s reference test tools by name, which a camera or the hub does not have';

/** Why each other scenario does not apply. */
export const NOT_APPLICABLE_SCENARIOS: Readonly<Record<string, string>> = {
  'logging-set-level':
    'neither server declares the logging capability (no device logs are offered to MCP clients), so logging/setLevel is -32601 as the spec asks',
  'completion-complete': 'neither server declares completions (no prompts or resource templates with arguments to complete)',
  'tools-call-simple-text': NEEDS_REFERENCE_TOOLS,
  // Image blocks and progress are checked on the hub with its own tools: hub-mcp-server.test.ts.
  'tools-call-image': `${NEEDS_REFERENCE_TOOLS} (test_image_content); the hub's image blocks are checked with its snapshot tool`,
  'tools-call-audio': NEEDS_REFERENCE_TOOLS,
  'tools-call-embedded-resource': NEEDS_REFERENCE_TOOLS,
  'tools-call-mixed-content': NEEDS_REFERENCE_TOOLS,
  'tools-call-with-logging': `${NEEDS_REFERENCE_TOOLS}, and sends logging/setLevel (no logging capability)`,
  // Its only check is that test_error_handling answers isError: the error semantics are checked with
  // the servers' own tools (fail_always, unknown tools, bad arguments) in hub-mcp-server.test.ts.
  'tools-call-error': `${NEEDS_REFERENCE_TOOLS} (test_error_handling)`,
  'tools-call-with-progress': `${NEEDS_REFERENCE_TOOLS} (test_tool_with_progress); the hub's progress is checked with a slow device tool`,
  'tools-call-sampling': `${NEEDS_REFERENCE_TOOLS}; the servers never ask the client to sample a model`,
  'tools-call-elicitation': `${NEEDS_REFERENCE_TOOLS}; the servers never elicit input from the user`,
  'json-schema-2020-12': `${NEEDS_REFERENCE_TOOLS} (json_schema_2020_12_tool)`,
  'elicitation-sep1034-defaults': `${NEEDS_REFERENCE_TOOLS}; no elicitation`,
  'elicitation-sep1330-enums': `${NEEDS_REFERENCE_TOOLS}; no elicitation`,
  'server-sse-polling': 'needs a session and the test_reconnection tool: both servers are stateless (any hub replica answers; a device keeps no client state)',
  'server-sse-multiple-streams': 'needs a session (GET streams beside POST): both servers are stateless',
  'resources-list':
    'reads the suite’s reference resources (test://static-text…); the device offers none, the hub’s device cards are checked in hub-mcp-server.test.ts',
  'resources-read-text': 'reads the reference resource test://static-text',
  'resources-read-binary': 'reads the reference resource test://static-binary',
  'resources-templates-read': 'reads the reference template test://template/{id}/data',
  'resources-subscribe': 'subscribes to a reference resource; neither server declares resource subscriptions',
  'resources-unsubscribe': 'unsubscribes from a reference resource; neither server declares resource subscriptions',
  'prompts-list': 'neither server offers prompts',
  'prompts-get-simple': 'neither server offers prompts (reference prompt test_simple_prompt)',
  'prompts-get-with-args': 'neither server offers prompts',
  'prompts-get-embedded-resource': 'neither server offers prompts',
  'prompts-get-with-image': 'neither server offers prompts',
};
