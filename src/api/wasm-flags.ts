// undici parses HTTP with WebAssembly; optimising that module costs ~35 MiB of RSS for no gain at our request
// rates, and builds are pushed from memory-tight CI runners. Imported before undici so the flag is in place first.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--liftoff-only');
