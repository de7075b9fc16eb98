// The confinement the fs tools use is shared with the local sandbox plugin, so it lives in the kernel (no plugin
// imports another's internals); this module keeps the tools' import path.
export * from '../../kernel/sandbox-fs.js';
