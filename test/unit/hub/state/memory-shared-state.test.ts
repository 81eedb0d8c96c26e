import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemorySharedState } from '../../../../hub/src/state/memory-shared-state.js';

describe('MemorySharedState claims', () => {
  it('claimed once while the claim lives, already_claimed meanwhile, claimed again after its ttl; scopes apart', async () => {
    let now = 1_000;
    const shared = new MemorySharedState({ now: () => now });
    assert.equal(await shared.claimOnce('nonce', 'n-1', 100), 'claimed');
    assert.equal(await shared.claimOnce('nonce', 'n-1', 100), 'already_claimed');
    assert.equal(await shared.claimOnce('other', 'n-1', 100), 'claimed', 'scopes are apart');
    now += 100;
    assert.equal(await shared.claimOnce('nonce', 'n-1', 100), 'claimed', 'an expired claim may be made again');
  });

  it('full when it holds as many live claims as it may (nothing known of the key: not already_claimed); room again as claims expire', async () => {
    let now = 1_000;
    const shared = new MemorySharedState({ maxClaims: 2, now: () => now });
    assert.equal(await shared.claimOnce('nonce', 'a', 100), 'claimed');
    now += 10;
    assert.equal(await shared.claimOnce('nonce', 'b', 100), 'claimed');
    assert.equal(await shared.claimOnce('nonce', 'c', 100), 'full');
    assert.equal(await shared.claimOnce('nonce', 'a', 100), 'already_claimed', 'a live claim is still told apart while full');
    assert.equal(await shared.claimOnce('other', 'c', 100), 'claimed', 'the bound is per scope');
    now = 1_100;
    assert.equal(await shared.claimOnce('nonce', 'c', 100), 'claimed', 'a expired: its place is taken');
    assert.equal(await shared.claimOnce('nonce', 'd', 100), 'full', 'b and c live');
    assert.equal(await shared.claimOnce('nonce', 'c', 100), 'already_claimed', 'the one that was refused as full is claimed now');
  });

  it('a holder over its bound is holder_full, alone: another holder and holderless claims go on; its place frees as its claims expire', async () => {
    let now = 1_000;
    const shared = new MemorySharedState({ maxClaims: 10, now: () => now });
    const noisy = { id: 'noisy', max: 2 };
    assert.equal(await shared.claimOnce('nonce', 'n-1', 100, noisy), 'claimed');
    now += 10;
    assert.equal(await shared.claimOnce('nonce', 'n-2', 100, noisy), 'claimed');
    assert.equal(await shared.claimOnce('nonce', 'n-3', 100, noisy), 'holder_full');
    assert.equal(await shared.claimOnce('nonce', 'n-1', 100, noisy), 'already_claimed', 'a live claim is still a replay');
    assert.equal(await shared.claimOnce('nonce', 'q-1', 100, { id: 'quiet', max: 2 }), 'claimed', 'another holder');
    assert.equal(await shared.claimOnce('nonce', 'x-1', 100), 'claimed', 'no holder');
    assert.equal(await shared.claimOnce('other', 'n-3', 100, noisy), 'claimed', 'the bound is per scope');
    now = 1_100;
    assert.equal(await shared.claimOnce('nonce', 'n-3', 100, noisy), 'claimed', 'n-1 expired: its place is the holder’s again');
    assert.equal(await shared.claimOnce('nonce', 'n-4', 100, noisy), 'holder_full', 'n-2 and n-3 live');
  });
});
