import type { PrismaClient } from '@modelgate/db';
import { createUser } from '@modelgate/testing';
import request from 'supertest';
import { logCsvChunks } from '../src/features/logs/service';
import { createTestAccount } from './support/app';
import { expectFailure } from './support/envelope';
import { consumeLogRow, LOGS_T0 } from './support/logs';
import { loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

const T0 = LOGS_T0;
const OWN_HEADER = 'id,created_at,type,content,model_name,token_name,quota,prompt_tokens,completion_tokens,use_time_ms,is_stream,request_id';
/** The last columns: what a media call had and its units (docs/api.md 2.14), empty for other rows. */
const MEDIA_HEADER = 'images,characters,seconds,requests,units,unit,usd_per_unit';
const NO_MEDIA = ',,,,,,,';

/** Consume rows as the relay writes them, `count` of them a minute apart from T0; returns their ids, oldest first. */
async function writeLogs(db: PrismaClient, user: { id: number; username: string }, count: number, fields: { modelName?: string; content?: string; type?: number } = {}) {
  await db.log.createMany({
    data: Array.from({ length: count }, (_, i) =>
      consumeLogRow(user, T0 + i * 60, { type: fields.type ?? 2, content: fields.content ?? '', modelName: fields.modelName ?? 'gpt-4o-mini', requestId: `req-${i}` }),
    ),
  });
}

/** Data records of a CSV answer (header dropped); every record ends in CRLF. */
function recordsOf(text: string): string[] {
  expect(text.endsWith('\r\n')).toBe(true);
  return text.split('\r\n').slice(1, -1);
}

describe('GET /api/log/self/export', () => {
  it("streams the caller's own rows as a CSV attachment, newest first, numbers bare", async () => {
    const user = await loggedInUser(account);
    const other = await createUser(prisma);
    await writeLogs(prisma, user, 3);
    await writeLogs(prisma, other, 2);
    const res = await user.agent.get('/api/log/self/export').expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="modelgate-logs-own-\d{8}T\d{6}Z\.csv"$/);
    expect(res.text.split('\r\n')[0]).toBe(`${OWN_HEADER},${MEDIA_HEADER}`);
    const records = recordsOf(res.text);
    expect(records).toHaveLength(3);
    const ids = records.map((record) => Number(record.split(',')[0]));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(records[0]).toBe(`${ids[0]},${T0 + 120},2,,gpt-4o-mini,ci,-100,10,5,321,true,req-2${NO_MEDIA}`);
  });

  it("writes a media row's quantities and, priced per unit, its units and unit price", async () => {
    const user = await loggedInUser(account);
    await prisma.log.createMany({
      data: [
        consumeLogRow(user, T0, {
          modelName: 'dall-e-3',
          content: '2 x USD 0.04 per image, group ratio 1',
          promptTokens: 0,
          completionTokens: 0,
          other: { entry: 'relay-1:7', group: 'default', model_ratio: 0, completion_ratio: 0, group_ratio: 1, images: 2, units: 2, unit: 'image', usd_per_unit: 0.04 },
        }),
        // Priced by the tokens its answer reported: the seconds heard, no units.
        consumeLogRow(user, T0 + 60, { modelName: 'gpt-4o-transcribe', other: { model_ratio: 3, completion_ratio: 1.666667, group_ratio: 1, seconds: 61 } }),
      ],
    });
    const records = recordsOf((await user.agent.get('/api/log/self/export').expect(200)).text);
    expect(records[0]).toMatch(/,gpt-4o-transcribe,ci,-100,10,5,321,true,req-\d+-\d+,,,61,,,,$/);
    expect(records[1]).toMatch(/,2,"2 x USD 0\.04 per image, group ratio 1",dall-e-3,ci,-100,0,0,321,true,req-\d+-\d+,2,,,,2,image,0\.04$/);
  });

  it('applies the filters of the list', async () => {
    const user = await loggedInUser(account);
    await writeLogs(prisma, user, 5);
    await writeLogs(prisma, user, 2, { modelName: 'claude-haiku-4-5', type: 5 });
    const byModel = await user.agent.get('/api/log/self/export?model_name=claude-haiku-4-5').expect(200);
    expect(recordsOf(byModel.text)).toHaveLength(2);
    const byType = await user.agent.get('/api/log/self/export?type=2&model_name=').expect(200);
    expect(recordsOf(byType.text)).toHaveLength(5);
    const byTime = await user.agent.get(`/api/log/self/export?type=2&start_timestamp=${T0 + 60}&end_timestamp=${T0 + 180}`).expect(200);
    expect(recordsOf(byTime.text).map((record) => record.split(',')[1])).toEqual([`${T0 + 180}`, `${T0 + 120}`, `${T0 + 60}`]);
    // The own export ignores `username`, as the own list does.
    const other = await createUser(prisma);
    await writeLogs(prisma, other, 1);
    expect(recordsOf((await user.agent.get(`/api/log/self/export?username=${other.username}`).expect(200)).text)).toHaveLength(7);
    expectFailure(await user.agent.get('/api/log/self/export?type=99'), 400, 'invalid_request', /type/);
  });

  it('quotes per RFC 4180 and defuses text a spreadsheet would run as a formula', async () => {
    const user = await loggedInUser(account);
    const contents = ['=HYPERLINK("http://evil.example","x")', '+1', '-2+3', '@SUM(A1)', '\tcmd', '\rcmd', 'a, "b"\nc', 'plain'];
    for (const content of contents) await writeLogs(prisma, user, 1, { content });
    const records = recordsOf((await user.agent.get('/api/log/self/export').expect(200)).text);
    const contentCells = records.reverse().map((record) => record.split(',').slice(3).join(',').replace(/,gpt-4o-mini,ci,-100,10,5,321,true,req-0,{7}$/, ''));
    expect(contentCells).toEqual([
      `"'=HYPERLINK(""http://evil.example"",""x"")"`,
      "'+1",
      "'-2+3",
      "'@SUM(A1)",
      "'\tcmd",
      `"'\rcmd"`,
      '"a, ""b""\nc"',
      'plain',
    ]);
  });

  it('needs a login', async () => {
    expectFailure(await request(app).get('/api/log/self/export'), 401, 'unauthorized');
  });
});

describe('GET /api/log/export', () => {
  it("exports everyone's rows with user_id, username and channel_id, filtered by username", async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const alice = await createUser(prisma, { username: 'alice' });
    const bob = await createUser(prisma, { username: 'bob' });
    await writeLogs(prisma, alice, 2);
    await writeLogs(prisma, bob, 1);
    const res = await admin.agent.get('/api/log/export').expect(200);
    expect(res.headers['content-disposition']).toMatch(/filename="modelgate-logs-all-\d{8}T\d{6}Z\.csv"/);
    expect(res.text.split('\r\n')[0]).toBe(`${OWN_HEADER},user_id,username,channel_id,${MEDIA_HEADER}`);
    expect(recordsOf(res.text)).toHaveLength(3);
    const bobs = recordsOf((await admin.agent.get('/api/log/export?username=bob').expect(200)).text);
    expect(bobs).toHaveLength(1);
    expect(bobs[0]).toMatch(new RegExp(`,req-0,${bob.id},bob,7${NO_MEDIA}$`));
  });

  it('pages through more rows than one query reads, none twice', async () => {
    const admin = await loggedInUser(account, { role: ROLE.admin });
    const user = await createUser(prisma);
    await writeLogs(prisma, user, 2_345);
    const records = recordsOf((await admin.agent.get('/api/log/export').expect(200)).text);
    expect(records).toHaveLength(2_345);
    expect(new Set(records.map((record) => record.split(',')[0])).size).toBe(2_345);
  });

  it('is for admins only', async () => {
    const user = await loggedInUser(account);
    expectFailure(await user.agent.get('/api/log/export'), 403, 'forbidden');
    expectFailure(await request(app).get('/api/log/export'), 401, 'unauthorized');
  });
});

describe('log export cap', () => {
  it('stops at the row cap, keeping the newest rows, across keyset pages', async () => {
    const user = await createUser(prisma);
    await writeLogs(prisma, user, 12);
    let text = '';
    for await (const chunk of logCsvChunks(account.deps, { scope: { userId: user.id }, filter: {}, maxRows: 7, pageRows: 3 })) text += chunk;
    const records = recordsOf(text);
    expect(records.map((record) => record.split(',')[11])).toEqual(['req-11', 'req-10', 'req-9', 'req-8', 'req-7', 'req-6', 'req-5']);
  });
});
