import { z } from 'zod';
import { isReservedName, unreservedName } from '../src';

describe('reserved names', () => {
  it.each(['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__'])('%j is reserved', (name) => {
    expect(isReservedName(name)).toBe(true);
    expect(unreservedName(z.string()).safeParse(name).success).toBe(false);
  });

  it.each(['gpt-4o', 'Constructor', 'my__proto__model', 'toString2', 'default', ''])('%j is an ordinary name', (name) => {
    expect(isReservedName(name)).toBe(false);
    expect(unreservedName(z.string()).parse(name)).toBe(name);
  });
});
