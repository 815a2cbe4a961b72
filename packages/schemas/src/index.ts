export * from './options';
export * from './invalidation';
