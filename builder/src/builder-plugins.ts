import store from '../plugins/store/src/index.js';
import meta from '../plugins/builder-meta/src/index.js';
import ontology from '../plugins/ontology/src/index.js';
import dataset from '../plugins/dataset/src/index.js';
import training from '../plugins/training/src/index.js';
import trackL from '../plugins/track-l/src/index.js';
import compile from '../plugins/compile/src/index.js';
import packages from '../plugins/package/src/index.js';
import deploy from '../plugins/deploy/src/index.js';
import { type Plugin } from 'lookout/core';

/** The builder's stage plugins, in the spec's stage order (the loader orders them by what they require). */
export const BUILDER_PLUGINS: readonly Plugin[] = [store, meta, ontology, dataset, training, trackL, compile, packages, deploy];

/** The state plugin fails the builder when it fails: without its database nothing else can run. */
export const ESSENTIAL_BUILDER_PLUGINS: readonly string[] = ['builder-store'];
