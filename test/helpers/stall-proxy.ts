// A loopback TCP proxy that can stop forwarding: what a paused database or bucket looks like from the emulator
// (connections accepted, nothing answered), without pausing a server other test files share. The bench's own
// (bench/stall-proxy.js), so the tests and the log-flood bench stall a database the same way.
export { stallProxy, type StallProxy } from '../../bench/stall-proxy.js';
