// Runs around every test file: whatever temporary directories the file made are removed when it ends.
import { afterAll } from 'vitest';
import { removeTempDirs } from './cli.js';

afterAll(removeTempDirs);
