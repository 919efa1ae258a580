/**
 * Hints the schema gives the gateway's compiled plans (src/gateway/compiled/) through field
 * `extensions`, for what they cannot see in the types.
 */

/**
 * On a field whose every read answers anew although the upstream answered the same (a link sealed
 * with a fresh nonce, a new expiry): the compiled plans leave documents selecting it to the engine, so
 * the differential test can hold every plan's answer to the engine's byte for byte.
 */
export const FRESH_EACH_READ = 'freshEachRead';
