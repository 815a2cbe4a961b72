import { chatGoalChecks, uploadGoalChecks } from '../src/goals';
import type { TargetResult } from '../src/report';
import { loadResult, streamResult, uploadResult } from './fixtures';

const direct: TargetResult = {
  target: 'upstream',
  streamLoad: { 'chat-openai': streamResult(1, 10, 4000), 'chat-anthropic': streamResult(1, 0, 4000) },
};

function relay(chatUs: { openai: number; anthropic: number }, streamUs: { openai: number; anthropic: number }): TargetResult {
  return {
    target: 'relay',
    concurrent: loadResult(2000, 20, 500),
    wholeLoad: { 'chat-openai': loadResult(1900, 21, chatUs.openai), 'chat-anthropic': loadResult(1500, 30, chatUs.anthropic) },
    streamLoad: {
      completions: streamResult(5, 0, 4000, 3000),
      'chat-openai': streamResult(5, 4, 2000, streamUs.openai),
      'chat-anthropic': streamResult(6, 0, 4000, streamUs.anthropic),
    },
  };
}

const verdicts = (checks: { ok: boolean; line: string }[]) => checks.map((check) => `${check.ok ? 'MET' : 'MISSED'} ${check.line}`);

describe('the benchmark targets', () => {
  it('holds the relay CPU per chat call, whole and streamed, to 1.15 x a completions call', () => {
    const lines = verdicts(chatGoalChecks([direct, relay({ openai: 575, anthropic: 580 }, { openai: 3450, anthropic: 3480 })], 50));
    expect(lines.slice(0, 4)).toEqual([
      'MET relay CPU per chat (OpenAI channel, pass-through) call at 50 connections, relay (direct): 575 us vs 500 us per completions call, 1.15x (<= 1.15x), 0 errors',
      'MET relay CPU per chat (OpenAI channel, pass-through) stream at 50 connections, relay (direct): 3450 us vs 3000 us per completions call, 1.15x (<= 1.15x), 0 errors',
      'MISSED relay CPU per chat (Anthropic channel, translated) call at 50 connections, relay (direct): 580 us vs 500 us per completions call, 1.16x (<= 1.15x), 0 errors',
      'MISSED relay CPU per chat (Anthropic channel, translated) stream at 50 connections, relay (direct): 3480 us vs 3000 us per completions call, 1.16x (<= 1.15x), 0 errors',
    ]);
  });

  it('judges merged chunks as a share of the chunks each side received', () => {
    const lines = verdicts(chatGoalChecks([direct, relay({ openai: 500, anthropic: 500 }, { openai: 3000, anthropic: 3000 })], 50));
    // 4 of 2,000 (0.2%) through the relay vs 10 of 4,000 (0.25%) direct: nothing held back.
    expect(lines.slice(4)).toEqual([
      'MET relay (direct), chat (OpenAI channel, pass-through) streams: 4/2000 chunks merged with the previous one vs 10/4000 direct (no chunk held back: <= 1 point more), 0 errors in 100',
      'MET relay (direct), chat (Anthropic channel, translated) streams: 0/4000 chunks merged with the previous one vs 0/4000 direct (no chunk held back: <= 1 point more), 0 errors in 200',
    ]);
  });

  it('misses on errors or chunks held back', () => {
    const failing = relay({ openai: 400, anthropic: 400 }, { openai: 2000, anthropic: 2000 });
    failing.wholeLoad = { 'chat-openai': loadResult(1900, 21, 400, 3) };
    failing.streamLoad = { ...failing.streamLoad, 'chat-anthropic': streamResult(6, 80, 4000, 2000) };
    const lines = verdicts(chatGoalChecks([direct, failing], 50));
    expect(lines.filter((line) => line.startsWith('MISSED'))).toEqual([
      'MISSED relay CPU per chat (OpenAI channel, pass-through) call at 50 connections, relay (direct): 400 us vs 500 us per completions call, 0.80x (<= 1.15x), 3 errors',
      'MISSED relay (direct), chat (Anthropic channel, translated) streams: 80/4000 chunks merged with the previous one vs 0/4000 direct (no chunk held back: <= 1 point more), 0 errors in 200',
    ]);
  });

  it('checks that no chunk of an Anthropic messages stream is held back, pass-through and translated', () => {
    const upstream: TargetResult = {
      target: 'upstream',
      streamLoad: { 'messages-anthropic': streamResult(1, 0, 4000), 'messages-openai': streamResult(1, 10, 4000) },
    };
    const edge: TargetResult = {
      target: 'edge',
      streamLoad: { 'messages-anthropic': streamResult(6, 2, 4000), 'messages-openai': streamResult(5, 90, 4000) },
    };
    expect(verdicts(chatGoalChecks([upstream, edge], 50))).toEqual([
      'MET edge -> relay -> upstream, messages (Anthropic channel, pass-through) streams: 2/4000 chunks merged with the previous one vs 0/4000 direct (no chunk held back: <= 1 point more), 0 errors in 200',
      'MISSED edge -> relay -> upstream, messages (OpenAI channel, translated) streams: 90/4000 chunks merged with the previous one vs 10/4000 direct (no chunk held back: <= 1 point more), 0 errors in 200',
    ]);
  });

  it('holds the relay CPU per call through a cloud channel to 1.15 x an OpenAI pass-through chat call', () => {
    const clouds: TargetResult = {
      target: 'relay',
      wholeLoad: { 'chat-openai': loadResult(1900, 21, 600), 'chat-bedrock': loadResult(1700, 25, 690), 'gemini-vertex': loadResult(1800, 22, 700, 2) },
    };
    expect(verdicts(chatGoalChecks([clouds], 50))).toEqual([
      'MET relay CPU per chat (Bedrock channel, Converse, SigV4) call at 50 connections, relay (direct): 690 us vs 600 us per chat (OpenAI channel, pass-through) call, ' +
        '1.15x (<= 1.15x), 0 errors',
      'MISSED relay CPU per generateContent (Vertex AI channel, pass-through) call at 50 connections, relay (direct): 700 us vs 600 us per chat (OpenAI channel, ' +
        'pass-through) call, 1.17x (<= 1.15x), 2 errors',
    ]);
  });

  it("holds what a key's limits and budget add to the relay CPU per OpenAI chat call to 20 us", () => {
    const within: TargetResult = { target: 'relay', wholeLoad: { 'chat-openai': loadResult(1900, 21, 600), 'chat-limited': loadResult(1850, 22, 618) } };
    const over: TargetResult = { target: 'relay', wholeLoad: { 'chat-openai': loadResult(1900, 21, 600), 'chat-limited': loadResult(1700, 25, 640) } };
    expect(verdicts([...chatGoalChecks([within], 50), ...chatGoalChecks([over], 50)])).toEqual([
      "MET relay CPU per chat with a key's limits and budget (OpenAI channel, pass-through) call at 50 connections, relay (direct): 618 us vs 600 us with the plain key, +18 us (<= 20 us), 0 errors",
      "MISSED relay CPU per chat with a key's limits and budget (OpenAI channel, pass-through) call at 50 connections, relay (direct): 640 us vs 600 us with the plain key, +40 us (<= 20 us), 0 errors",
    ]);
  });

  it('says nothing about a comparison whose cases did not run', () => {
    const onlyChat: TargetResult = { target: 'edge', wholeLoad: { 'chat-openai': loadResult(1000, 30, 700) } };
    expect(chatGoalChecks([onlyChat], 50)).toEqual([]);
  });
});

describe('the transcription upload target', () => {
  it('holds the growth of the relay RSS during a 20 MB upload to 8 MB, through the relay and through the edge', () => {
    const targets: TargetResult[] = [
      { target: 'upstream', upload: uploadResult(100, []) },
      { target: 'relay', upload: uploadResult(300, [{ name: 'relay', mb: 2.34 }]) },
      { target: 'edge', upload: uploadResult(400, [{ name: 'edge', mb: 0.5 }, { name: 'relay', mb: 8.2 }]) },
    ];
    expect(verdicts(uploadGoalChecks(targets))).toEqual([
      'MET relay RSS growth during one 20 MB transcription upload, relay (direct): +2.3 MB (<= 8), 0 errors',
      'MISSED relay RSS growth during one 20 MB transcription upload, edge -> relay -> upstream: +8.2 MB (<= 8), 0 errors',
    ]);
  });

  it('misses when the upload failed, however little memory it took', () => {
    const failed: TargetResult = { target: 'relay', upload: uploadResult(30, [{ name: 'relay', mb: 0.1 }], undefined, 1) };
    expect(verdicts(uploadGoalChecks([failed]))).toEqual([
      'MISSED relay RSS growth during one 20 MB transcription upload, relay (direct): +0.1 MB (<= 8), 1 errors',
    ]);
  });
});
