// The shared edge tests (tests/js/edges.mjs, also run by the native Node package) on the installed package.
import test from 'node:test';
import assert from 'node:assert/strict';
import { api } from './load.mjs';
import { runEdges } from '../../tests/js/edges.mjs';

runEdges(api, { test, assert });
