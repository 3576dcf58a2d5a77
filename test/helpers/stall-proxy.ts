// The stall proxy lives with the benches (plain JavaScript, bench/log-flood.js runs it too); the tests import it here.
export { stallProxy, type StallProxy } from '../../bench/stall-proxy.js';
