import { startRedisSentinel } from './src/redis-topologies';
import { Redis } from 'ioredis';
const fd = process.argv[2] === 'true';
(async () => {
  const s = await startRedisSentinel();
  const sentinels = s.env.REDIS_SENTINELS.split(',').map((x) => ({ host: '127.0.0.1', port: Number(x.split(':')[1]) }));
  const r = new Redis({ sentinels, name: s.env.REDIS_SENTINEL_NAME, failoverDetector: fd, lazyConnect: true });
  await r.connect(); await r.ping();
  await new Promise((res) => setTimeout(res, 300));
  await r.quit();
  await s.stop();
  console.log('done', fd);
})().catch((e) => { console.error('ERR', e); process.exit(1); });
