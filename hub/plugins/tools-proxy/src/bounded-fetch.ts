/** The most a device's tool server may send back for one request: far beyond any tool result. */
export const MAX_DEVICE_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * fetch whose response bodies are cut off past `maxBytes` (the stream errors): a device answering
 * with an endless body would otherwise grow the hub's memory for as long as the call's timeout.
 */
export function boundedFetch(maxBytes = MAX_DEVICE_RESPONSE_BYTES): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    let seen = 0;
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) controller.error(new Error(`the device sent more than ${maxBytes} bytes in one answer`));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(limited, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
