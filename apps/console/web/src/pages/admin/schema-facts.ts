/**
 * The gateway's codes and tables the admin pages need from packages/schemas: channel types, status
 * and role codes, option definitions. These modules are browser-safe, but the package exports them
 * only through its root entry, which also imports node:net; so they are imported by path, here only.
 */
export { CHANNEL_TYPE, CHANNEL_TYPES, type ChannelSettings, type ChannelType, isChannelType } from '../../../../../../packages/schemas/src/channel-types';
export { CHANNEL_STATUS, ROLE, USER_STATUS } from '../../../../../../packages/schemas/src/domain';
export { OPTION_DEFINITIONS, OPTION_KEYS, type OptionKey, type OptionRow, type OptionValues, parseOptions } from '../../../../../../packages/schemas/src/options';
