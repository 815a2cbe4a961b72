export * from './request-id';
export * from './errors';
export * from './validation';
export * from './health';
export * from './access-log';
export * from './server';
export * from './metrics';
export * from './metrics-text';
