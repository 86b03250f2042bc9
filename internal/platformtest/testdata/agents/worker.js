// The Agents SDK's cases of dosim's differential test: the same programs
// as agents_test.go's, run by the real SDK (agents, the version pinned in
// package.json) inside workerd. Each case answers an observation: named
// results, each {value} or {error}.
import { Agent, getAgentByName } from "agents";

const attempt = async (fn) => {
  try {
    const v = await fn();
    return { value: v === undefined ? null : v };
  } catch (e) {
    return { error: String(e && e.message) };
  }
};

export class Sched extends Agent {
  async work(payload) {
    await this.ctx.storage.put("ran-" + payload, true);
  }
  // schedule-dedupe: which schedules the SDK adds again and which it
  // returns instead (recurring ones are idempotent by default, one-shot
  // ones when asked, whatever their time).
  async scheduleDedupe() {
    const id = async (p) => (await p).id;
    const every1 = await id(this.scheduleEvery(60, "work", "e"));
    const every2 = await id(this.scheduleEvery(60, "work", "e"));
    const everyOther = await id(this.scheduleEvery(120, "work", "e"));
    const cron1 = await id(this.schedule("0 9 * * *", "work", "c"));
    const cron2 = await id(this.schedule("0 9 * * *", "work", "c"));
    const delay1 = await id(this.schedule(60, "work", "d"));
    const delay2 = await id(this.schedule(60, "work", "d"));
    const idem1 = await id(this.schedule(60, "work", "i", { idempotent: true }));
    const idem2 = await id(this.schedule(3600, "work", "i", { idempotent: true }));
    // scheduleEvery ignores an idempotent: false; schedule honours it.
    const everyOptOut1 = await id(this.scheduleEvery(60, "work", "o"));
    const everyOptOut2 = await id(this.scheduleEvery(60, "work", "o", { idempotent: false }));
    const optOut1 = await id(this.schedule("0 10 * * *", "work", "o"));
    const optOut2 = await id(this.schedule("0 10 * * *", "work", "o", { idempotent: false }));
    return {
      everySame: { value: every1 === every2 },
      everyOtherIntervalSame: { value: every1 === everyOther },
      cronSame: { value: cron1 === cron2 },
      delaySame: { value: delay1 === delay2 },
      delayIdempotentSame: { value: idem1 === idem2 },
      everyOptOutSame: { value: everyOptOut1 === everyOptOut2 },
      optOutSame: { value: optOut1 === optOut2 },
      count: { value: (await this.getSchedules()).length },
    };
  }
  // schedule-bounds: the SDK's words for bad schedules.
  async scheduleBounds() {
    return {
      everyTooLong: await attempt(() => this.scheduleEvery(2592001, "work", "x")),
      everyZero: await attempt(() => this.scheduleEvery(0, "work", "x")),
      unknown: await attempt(() => this.schedule(60, "nope", "x")),
    };
  }
}

export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    if (url.pathname === "/version") return new Response("agents");
    const agent = await getAgentByName(env.Sched, url.pathname);
    switch (url.pathname) {
      case "/schedule-dedupe":
        return Response.json(await agent.scheduleDedupe());
      case "/schedule-bounds":
        return Response.json(await agent.scheduleBounds());
    }
    return new Response("no case " + url.pathname, { status: 404 });
  },
};
