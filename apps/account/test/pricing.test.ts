import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { loggedInUser } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

interface ModelPrice {
  model_name: string;
  input_usd_per_1m: number;
  cached_input_usd_per_1m: number;
  cache_write_usd_per_1m: number;
  output_usd_per_1m: number;
}
interface Pricing {
  group: string;
  group_ratio: number;
  items: ModelPrice[];
}

async function setOption(key: string, value: unknown) {
  await prisma.option.upsert({ where: { key }, create: { key, value: JSON.stringify(value) }, update: { value: JSON.stringify(value) } });
}

describe('GET /api/pricing', () => {
  it('prices the default models as docs/api.md 2.11 lists them, sorted by model', async () => {
    const user = await loggedInUser(account);
    const pricing = expectOk(await user.agent.get('/api/pricing')) as Pricing;
    expect(pricing).toMatchObject({ group: 'default', group_ratio: 1 });
    const names = pricing.items.map((item) => item.model_name);
    expect(names).toEqual([...names].sort());
    const byModel = new Map(pricing.items.map((item) => [item.model_name, item]));
    expect(byModel.get('claude-sonnet-4-5')).toEqual({
      model_name: 'claude-sonnet-4-5',
      input_usd_per_1m: 3,
      cached_input_usd_per_1m: 0.3,
      cache_write_usd_per_1m: 3.75,
      output_usd_per_1m: 15,
    });
    expect(byModel.get('gpt-4o-mini')).toEqual({
      model_name: 'gpt-4o-mini',
      input_usd_per_1m: 0.15,
      cached_input_usd_per_1m: 0.075,
      cache_write_usd_per_1m: 0.15,
      output_usd_per_1m: 0.6,
    });
    expect(byModel.get('gemini-2.5-flash')).toMatchObject({ input_usd_per_1m: 0.3, output_usd_per_1m: 2.5, cached_input_usd_per_1m: 0.03 });
    expect(byModel.get('text-embedding-3-small')).toMatchObject({ input_usd_per_1m: 0.02, output_usd_per_1m: 0.02 });
  });

  it("applies the caller's group ratio and the stored ratio maps", async () => {
    await setOption('ModelRatio', { 'zeta-model': 1, 'alpha-model': 0.5 });
    await setOption('CompletionRatio', { 'zeta-model': 3 });
    await setOption('CacheRatio', { 'alpha-model': 0.2 });
    await setOption('GroupRatio', { default: 1, vip: 0.8 });
    const user = await loggedInUser(account, { group: 'vip' });
    expect(expectOk(await user.agent.get('/api/pricing'))).toEqual({
      group: 'vip',
      group_ratio: 0.8,
      items: [
        { model_name: 'alpha-model', input_usd_per_1m: 0.8, cached_input_usd_per_1m: 0.16, cache_write_usd_per_1m: 0.8, output_usd_per_1m: 0.8 },
        { model_name: 'zeta-model', input_usd_per_1m: 1.6, cached_input_usd_per_1m: 1.6, cache_write_usd_per_1m: 1.6, output_usd_per_1m: 4.8 },
      ],
    });
  });

  it('counts a group missing from GroupRatio as 1', async () => {
    await setOption('ModelRatio', { m: 1 });
    const user = await loggedInUser(account, { group: 'unlisted' });
    expect(expectOk(await user.agent.get('/api/pricing'))).toMatchObject({ group: 'unlisted', group_ratio: 1, items: [{ input_usd_per_1m: 2 }] });
  });

  it('needs a login', async () => {
    expectFailure(await request(app).get('/api/pricing'), 401, 'unauthorized');
  });
});
