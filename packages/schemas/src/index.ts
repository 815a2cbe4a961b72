export * from './channel-settings';
export * from './channel-types';
export * from './domain';
export * from './ip-allow-list';
export * from './names';
export * from './options';
export * from './pricing';
export * from './invalidation';
