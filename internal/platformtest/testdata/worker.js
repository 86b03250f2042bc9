// The Worker and Durable Object classes of dosim's differential test
// (internal/platformtest). Each case runs here against a real Durable Object
// and answers GET /case/<name>?class=sql|kv with an observation: a JSON
// object of named results, each {"value": ...} or {"error": {...}}. The Go
// side runs the same case through dosim and compares the two.
import { DurableObject } from "cloudflare:workers";

// Module-level, so it outlives an object's reset (abort, a failed
// blockConcurrencyWhile): what ran, by object name.
const runs = new Map();
function bump(name, what) {
  const k = name + "/" + what;
  runs.set(k, (runs.get(k) || 0) + 1);
}
function count(name, what) {
  return runs.get(name + "/" + what) || 0;
}
const alarmLog = new Map();
// What each object's WebSocket handlers saw, by object name.
const wsLog = new Map();
function wsLogOf(name) {
  if (!wsLog.has(name)) wsLog.set(name, { messages: [], closes: [] });
  return wsLog.get(name);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// An error as the caller sees it: message, JS name and the flags the
// runtime sets.
function errObs(e) {
  const o = { message: String(e && e.message), name: e && e.name };
  for (const f of ["remote", "retryable", "overloaded", "durableObjectReset"]) {
    o[f] = e && e[f] === true;
  }
  if (e && e.code !== undefined) o.code = e.code;
  return { error: o };
}
async function attempt(fn) {
  try {
    const v = await fn();
    return { value: v === undefined ? null : v };
  } catch (e) {
    return errObs(e);
  }
}

// How many times each object's constructor ran, by id.
const built = new Map();

class Base extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.ctx = ctx;
    built.set(ctx.id.toString(), (built.get(ctx.id.toString()) || 0) + 1);
  }
  built() {
    return built.get(this.ctx.id.toString()) || 0;
  }
  ping() {
    return "pong";
  }
  setName(name) {
    this.name = name;
  }
  throwWith(name, message, props) {
    bump(name, "throwWith");
    const e = new Error(message);
    Object.assign(e, props);
    throw e;
  }
  abort(name, reason) {
    bump(name, "abort");
    if (reason === null) this.ctx.abort();
    else this.ctx.abort(reason);
    return "after abort";
  }
  // Holds the input gate for ms, then aborts inside the callback.
  async holdThenAbort(name, ms, reason) {
    bump(name, "hold");
    await this.ctx.blockConcurrencyWhile(async () => {
      await sleep(ms);
      this.ctx.abort(reason);
    });
    return "after abort";
  }
  // Holds the input gate for ms inside blockConcurrencyWhile.
  async hold(name, ms) {
    bump(name, "hold");
    await this.ctx.blockConcurrencyWhile(() => sleep(ms));
    return "held";
  }
  async slow(name, ms) {
    bump(name, "slow");
    await sleep(ms);
    return "slept";
  }
  count(name) {
    bump(name, "count");
    return count(name, "count");
  }
  runs(name, what) {
    return count(name, what);
  }
  // read-modify-write of key "n" with an optional timer between.
  async incr(sleepMs) {
    const s = this.ctx.storage;
    const v = (await s.get("n")) || 0;
    if (sleepMs > 0) await sleep(sleepMs);
    await s.put("n", v + 1);
    return v + 1;
  }
  async getN() {
    return (await this.ctx.storage.get("n")) || 0;
  }
  // Storage cases run inside the object: their errors never cross RPC.
  async storage(which) {
    const s = this.ctx.storage;
    const r = {};
    switch (which) {
      case "empty-key":
        r.put = await attempt(() => s.put("", 1));
        r.get = await attempt(() => s.get(""));
        break;
      case "key-size":
        r.k2048 = await attempt(() => s.put("k".repeat(2048), 1));
        r.k2049 = await attempt(() => s.put("k".repeat(2049), 1));
        break;
      case "pairs": {
        const many = (n) => {
          const m = {};
          for (let i = 0; i < n; i++) m["k" + i] = i;
          return m;
        };
        const keys = (n) => Object.keys(many(n));
        r.put128 = await attempt(() => s.put(many(128)));
        r.put129 = await attempt(() => s.put(many(129)));
        r.get128 = await attempt(async () => (await s.get(keys(128))).size);
        r.get129 = await attempt(async () => (await s.get(keys(129))).size);
        r.delete128 = await attempt(() => s.delete(keys(128)));
        r.delete129 = await attempt(() => s.delete(keys(129)));
        break;
      }
      case "value-size":
        r.s131100 = await attempt(() => s.put("v", "x".repeat(131100)));
        r.s131101 = await attempt(() => s.put("w", "x".repeat(131101)));
        for (const n of [131072, 131093, 131094]) {
          r["bytes" + n] = await attempt(() => s.put("b" + n, new Uint8Array(n)));
        }
        break;
      case "list": {
        await s.put({ a: 1, b: 2, c: 3 });
        const keys = async (o) => [...(await s.list(o)).keys()];
        r.all = await attempt(() => keys({}));
        r.startAfterEnd = await attempt(() => keys({ start: "c", end: "a" }));
        r.startAfter = await attempt(() => keys({ startAfter: "a" }));
        r.limit0 = await attempt(() => keys({ limit: 0 }));
        r.limitNeg = await attempt(() => keys({ limit: -1 }));
        r.startAndStartAfter = await attempt(() => keys({ start: "a", startAfter: "b" }));
        break;
      }
      case "sql": {
        // Run on a key-value-backed class, every statement throws: it has
        // no SQL API. Statements and their words, as a user meets them.
        const q = (query, ...args) => attempt(() => s.sql.exec(query, ...args).toArray());
        r.create = await q("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER)");
        r.insert = await q("INSERT INTO t (name, n) VALUES (?, ?), (?, ?)", "a", 1, "b", 2);
        r.select = await q("SELECT name, n FROM t ORDER BY name");
        r.unique = await q("INSERT INTO t (name, n) VALUES ('a', 3)");
        r.params = await q("SELECT name FROM t WHERE name = ?");
        r.paramsExtra = await q("SELECT name FROM t WHERE name = ?", "a", "b");
        r.empty = await q("");
        r.syntax = await q("SELEC 1");
        r.multi = await q("INSERT INTO t (name, n) VALUES ('c', 3); INSERT INTO nosuch VALUES (1)");
        r.afterMulti = await q("SELECT name FROM t ORDER BY name");
        r.oneNone = await attempt(() => s.sql.exec("SELECT n FROM t WHERE name = 'zz'").one());
        r.oneMany = await attempt(() => s.sql.exec("SELECT n FROM t").one());
        r.one = await attempt(() => s.sql.exec("SELECT n FROM t WHERE name = 'a'").one());
        r.blob = await q("SELECT length(?) AS len", new Uint8Array(600000));
        r.rename = await q("ALTER TABLE t RENAME TO t2");
        r.renameColumn = await q("ALTER TABLE t2 RENAME COLUMN n TO m");
        r.afterRename = await q("SELECT name, m FROM t2 ORDER BY name");
        // Text in columns declared as dates reads back as stored.
        r.dates = await q("CREATE TABLE d (a DATETIME, b DATE, c TIMESTAMP)");
        r.datesInsert = await q("INSERT INTO d VALUES (?, ?, ?)", "2025-01-01T00:15:00.123Z", "2025-01-01", "2025-01-01 00:15:00.5");
        r.datesRead = await q("SELECT a, b, c FROM d");
        break;
      }
      case "sql-counters": {
        // A cursor's rowsRead and rowsWritten, read after its rows, where
        // dosim counts as the platform does: a table without an index,
        // statements that read the rows they return, and a cursor of
        // several statements, which counts its last one. (dosim does not
        // count the rows a statement visits without returning them:
        // docs/rules.md; sql-writes has the index entries.)
        const c = (query, ...args) =>
          attempt(() => {
            const cur = s.sql.exec(query, ...args);
            const rows = cur.toArray().length;
            return { rows, read: cur.rowsRead, written: cur.rowsWritten };
          });
        const w = (query) => attempt(() => s.sql.exec(query).rowsWritten);
        r.create = await attempt(() => {
          s.sql.exec("CREATE TABLE u (k TEXT, n INTEGER)");
          return null;
        });
        if (r.create.error) break; // a key-value-backed class has no SQL
        r.insert = await c("INSERT INTO u VALUES ('a', 1), ('b', 2), ('c', 3)");
        r.scan = await c("SELECT * FROM u");
        r.update = await w("UPDATE u SET n = n + 1 WHERE k <> 'a'");
        r.multi = await c("INSERT INTO u VALUES ('e', 5); UPDATE u SET n = 0 WHERE k = 'e'; SELECT * FROM u");
        r.multiWrite = await c("SELECT * FROM u; INSERT INTO u VALUES ('f', 6)");
        r.delete = await w("DELETE FROM u WHERE k = 'f'");
        r.deleteAll = await c("DELETE FROM u");
        break;
      }
      case "sql-writes": {
        // rowsWritten where tables have indexes: each index entry a row's
        // insert or update writes counts beside the row (dosim counts a
        // partial index as if every row met its WHERE: left out).
        const w = (query) => attempt(() => s.sql.exec(query).rowsWritten);
        r.create = await attempt(() => {
          for (const q of SQL_WRITES_SCHEMA) s.sql.exec(q);
          return null;
        });
        if (r.create.error) break; // a key-value-backed class has no SQL
        for (const [key, q] of SQL_WRITES) r[key] = await w(q);
        break;
      }
      default:
        throw new Error("no storage case " + which);
    }
    return r;
  }
  // Alarms: arm at delayMs; the handler fails its first `fails` deliveries
  // (-1: always) and logs retryCount, isRetry and getAlarm inside.
  async armAlarm(name, delayMs, fails) {
    this.alarmName = name;
    await this.ctx.storage.put("alarm-cfg", { name, fails });
    const at = Date.now() + delayMs;
    await this.ctx.storage.setAlarm(at);
    alarmLog.set(name, { scheduled: at, deliveries: [] });
    return at;
  }
  async alarm(info) {
    const at = Date.now(); // before any I/O: when the delivery began
    const cfg = await this.ctx.storage.get("alarm-cfg");
    const log = alarmLog.get(cfg.name);
    const inside = await this.ctx.storage.getAlarm();
    log.deliveries.push({ at, retryCount: info.retryCount, isRetry: info.isRetry, getAlarmInside: inside });
    if (cfg.fails < 0 || log.deliveries.length <= cfg.fails) {
      throw new Error("alarm fails");
    }
  }
  async getAlarm() {
    return await this.ctx.storage.getAlarm();
  }
  // Sets the alarm offsetMs from now and reads it back in the same turn:
  // how far from now getAlarm says it is (0 for an alarm set in the past,
  // which the platform sets for now).
  async setAndRead(offsetMs) {
    const now = Date.now();
    await this.ctx.storage.setAlarm(now + offsetMs);
    const got = await this.ctx.storage.getAlarm();
    return got === null ? null : Math.max(0, Math.round((got - now) / 1000));
  }
  // Stores a key and an alarm a minute out, then deleteAll: what is left.
  async deleteAllWithAlarm() {
    await this.ctx.storage.put("x", 1);
    await this.ctx.storage.setAlarm(Date.now() + 60000);
    await this.ctx.storage.deleteAll();
    return { alarm: await this.ctx.storage.getAlarm(), x: (await this.ctx.storage.get("x")) ?? null };
  }
  async deleteAlarm() {
    await this.ctx.storage.deleteAlarm();
  }
  alarmLog(name) {
    return alarmLog.get(name);
  }
  // WebSockets (rules W1-W5): GET /ws?name=&tags=[...]&att={...} accepts
  // a socket with those tags and attachment and answers 101.
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname !== "/ws") return new Response("no such path", { status: 404 });
    const pair = new WebSocketPair();
    const [client, server] = Object.values(pair);
    this.ctx.acceptWebSocket(server, JSON.parse(url.searchParams.get("tags") || "[]"));
    const att = url.searchParams.get("att");
    if (att !== null) server.serializeAttachment(JSON.parse(att));
    return new Response(null, { status: 101, webSocket: client });
  }
  // A message is broadcast to every member as "<attachment name>: <msg>";
  // "close-me" makes the object close the socket with 4000 "kick".
  webSocketMessage(ws, msg) {
    const att = ws.deserializeAttachment();
    const name = att ? att.room : "";
    wsLogOf(name).messages.push(msg);
    if (msg === "close-me") {
      ws.close(4000, "kick");
      return;
    }
    for (const w of this.ctx.getWebSockets("member")) w.send(att.name + ": " + msg);
  }
  webSocketClose(ws, code, reason, wasClean) {
    const att = ws.deserializeAttachment();
    wsLogOf(att ? att.room : "").closes.push({ code, reason, wasClean });
  }
  wsInfo(name) {
    const all = this.ctx.getWebSockets();
    return {
      open: all.length,
      members: this.ctx.getWebSockets("member").length,
      tags: all.map((w) => this.ctx.getTags(w)),
      log: wsLogOf(name),
      autoAnswered: all.map((w) => this.ctx.getWebSocketAutoResponseTimestamp(w) !== null),
    };
  }
  // websocket-drop's client: an object that opens a socket to the room
  // object called room (of namespace cls) and holds it in a field; its
  // reset (dropSocket) takes the socket with it, without a close frame.
  async holdSocket(cls, room, user) {
    const stub = ns(this.env, cls).get(ns(this.env, cls).idFromName(room));
    const c = await connect(stub, room, user, ["member"]);
    this.held = c.ws;
    return c.status;
  }
  dropSocket() {
    this.ctx.abort("drop");
  }
  wsAuto(request, response) {
    this.ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(request, response));
  }
  // The WebSocket API's limits, inside the object. A DOMException's
  // legacy numeric code is dropped: Go has no such thing, and its class
  // and message are compared.
  wsLimits() {
    const r = {};
    const pair = () => Object.values(new WebSocketPair());
    const [, s0] = pair();
    r.tags11Same = tryErr(() => this.ctx.acceptWebSocket(s0, Array(11).fill("t")));
    r.tags11SameGot = { value: this.ctx.getTags(s0) };
    const [, s1] = pair();
    r.tags11 = tryErr(() => this.ctx.acceptWebSocket(s1, Array.from({ length: 11 }, (_, i) => "t" + i)));
    const [, s2] = pair();
    r.tag257 = tryErr(() => this.ctx.acceptWebSocket(s2, ["t".repeat(257)]));
    const [c3, s3] = pair();
    r.sendBeforeAccept = tryErr(() => s3.send("x"));
    this.ctx.acceptWebSocket(s3, []);
    for (const n of [2046, 16382, 16383]) {
      r["attachment" + n] = tryErr(() => s3.serializeAttachment("a".repeat(n)));
      if (r["attachment" + n].error) r["attachment" + n].error.message = r["attachment" + n].error.message.split("'attachment' was")[0];
    }
    for (const c of [999, 1001, 1004, 1005, 1006, 1015, 2999, 5000]) {
      const [, sc] = pair();
      this.ctx.acceptWebSocket(sc, []);
      r["closeCode" + c] = tryErr(() => sc.close(c, ""));
    }
    r.closeReason124 = tryErr(() => s3.close(1000, "r".repeat(124)));
    r.acceptTwice = tryErr(() => this.ctx.acceptWebSocket(s3, []));
    s3.close(1000, "done");
    r.sendAfterClose = tryErr(() => s3.send("x"));
    for (const v of Object.values(r)) if (v.error) delete v.error.code;
    return r;
  }
}

function tryErr(fn) {
  try {
    const v = fn();
    return { value: v === undefined ? null : v };
  } catch (e) {
    return errObs(e);
  }
}

// connect opens a WebSocket to stub as user with tags, and returns the
// client end with an inbox: next() is the next message, or the close as
// {closed: {code, reason, wasClean}}, or "timeout" after 3 s.
async function connect(stub, room, user, tags) {
  const q = new URLSearchParams({ tags: JSON.stringify(tags), att: JSON.stringify({ name: user, room }) });
  const resp = await stub.fetch("http://do/ws?" + q, { headers: { Upgrade: "websocket" } });
  const ws = resp.webSocket;
  ws.accept();
  const inbox = [];
  let wake = null;
  ws.addEventListener("message", (e) => {
    inbox.push(e.data);
    if (wake) wake();
  });
  ws.addEventListener("close", (e) => {
    inbox.push({ closed: { code: e.code, reason: e.reason, wasClean: e.wasClean } });
    if (wake) wake();
  });
  const next = async () => {
    for (let i = 0; i < 30 && inbox.length === 0; i++) {
      await Promise.race([new Promise((r) => (wake = r)), sleep(100)]);
    }
    return inbox.length ? inbox.shift() : "timeout";
  };
  return { ws, status: resp.status, next };
}

// waitFor polls stub.wsInfo(name) until ok(info) or 3 s.
async function waitFor(stub, name, ok) {
  let info = await stub.wsInfo(name);
  for (let i = 0; i < 30 && !ok(info); i++) {
    await sleep(100);
    info = await stub.wsInfo(name);
  }
  return info;
}

// The sql-writes case's tables and statements (mirror_test.go has the same).
const SQL_WRITES_SCHEMA = [
  "CREATE TABLE v (k TEXT, n INTEGER, m INTEGER)",
  "CREATE INDEX v_n ON v (n)",
  "CREATE INDEX v_nm ON v (n, m)",
  "CREATE TABLE p (k TEXT PRIMARY KEY, n INTEGER UNIQUE)",
  "CREATE TABLE a (id INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER)",
  "CREATE TABLE wr (k TEXT PRIMARY KEY, n INTEGER, m INTEGER) WITHOUT ROWID",
  "CREATE INDEX wr_n ON wr (n)",
  "CREATE TABLE x (id INTEGER PRIMARY KEY, n INTEGER)",
  "CREATE INDEX x_n ON x (n)",
  "CREATE TABLE tt (n INTEGER)",
  "CREATE TABLE tlog (n INTEGER)",
  "CREATE INDEX tlog_n ON tlog (n)",
  "CREATE TRIGGER tt_log AFTER INSERT ON tt BEGIN INSERT INTO tlog VALUES (new.n); END",
  "CREATE TRIGGER tt_up AFTER UPDATE ON tt BEGIN UPDATE tlog SET n = new.n WHERE n = old.n; END",
  "CREATE TABLE src (n INTEGER)",
  "CREATE TABLE dst (k INTEGER, n INTEGER, note TEXT)",
  "CREATE INDEX dst_k ON dst (k)",
  "CREATE INDEX dst_n ON dst (n)",
  "CREATE TRIGGER src_up AFTER UPDATE ON src BEGIN UPDATE dst SET note = 'c'; END",
  "CREATE TABLE h (a INTEGER, c TEXT)",
  "CREATE INDEX h_lc ON h (lower(c))",
  "CREATE TABLE r (oid TEXT, n INTEGER)",
  "CREATE INDEX r_n ON r (n)",
  "CREATE TABLE s (id INTEGER PRIMARY KEY, note TEXT DEFAULT 'no AUTOINCREMENT here')",
];
const SQL_WRITES = [
  ["insertTwoIndexes", "INSERT INTO v VALUES ('a', 1, 1), ('b', 2, 2)"],
  ["updateBoth", "UPDATE v SET n = n + 1"],
  ["updateOne", "UPDATE v SET m = m + 1"],
  ["updateNone", "UPDATE v SET k = k || 'x'"],
  ["updateSame", "UPDATE v SET n = n"],
  ["deleteIndexed", "DELETE FROM v WHERE k = 'ax'"],
  ["insertUnique", "INSERT INTO p VALUES ('a', 1), ('b', 2)"],
  ["updateUnique", "UPDATE p SET n = n + 10"],
  ["updateKey", "UPDATE p SET k = k || 'x' WHERE k = 'a'"],
  ["replace", "INSERT OR REPLACE INTO p VALUES ('bx', 12)"],
  ["upsertUpdates", "INSERT INTO p VALUES ('ax', 1) ON CONFLICT (k) DO UPDATE SET n = 99"],
  ["upsertInserts", "INSERT INTO p VALUES ('new', 50) ON CONFLICT (k) DO UPDATE SET n = 98"],
  ["upsertBoth", "INSERT INTO p VALUES ('ax', 60), ('z', 61) ON CONFLICT (k) DO UPDATE SET n = excluded.n"],
  ["insertAuto", "INSERT INTO a (n) VALUES (1), (2)"],
  ["insertAutoAgain", "INSERT INTO a (n) VALUES (3)"],
  ["updateAuto", "UPDATE a SET n = 0"],
  ["insertWR", "INSERT INTO wr VALUES ('a', 1, 1), ('b', 2, 2)"],
  ["updateWR", "UPDATE wr SET n = n + 1"],
  ["updateWRm", "UPDATE wr SET m = m + 1"],
  ["updateWRkey", "UPDATE wr SET k = k || 'x' WHERE k = 'a'"],
  ["insertRowid", "INSERT INTO x (n) VALUES (1), (2)"],
  ["updateRowid", "UPDATE x SET id = id + 10"],
  ["updateRowidName", "UPDATE x SET rowid = rowid + 10"],
  ["triggerInsert", "INSERT INTO tt VALUES (7)"],
  ["triggerUpdate", "UPDATE tt SET n = 8"],
  ["setupTriggered", "INSERT INTO src VALUES (1); INSERT INTO dst VALUES (1, 1, 'a')"],
  ["triggerUpdateUnindexed", "UPDATE src SET n = 2"],
  ["setupExpression", "INSERT INTO h VALUES (1, 'x')"],
  ["updateBesideExpression", "UPDATE h SET a = 5"],
  ["updateExpression", "UPDATE h SET c = 'y'"],
  ["setupOid", "INSERT INTO r VALUES ('a', 1)"],
  ["updateColumnNamedOid", "UPDATE r SET oid = 'b'"],
  ["insertNotAutoincrement", "INSERT INTO s (id) VALUES (1)"],
  ["deleteAll", "DELETE FROM v"],
];

export class SqlObject extends Base {}
export class KvObject extends Base {}

function ns(env, cls) {
  return cls === "kv" ? env.KV : env.SQL;
}

const cases = {
  // A chat of two members: tags, attachments, a broadcast, a client's
  // close and an object's close, as each side sees them (rules W1-W3).
  async "websocket-chat"(env, cls, name) {
    const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
    const r = {};
    const a = await connect(stub, name, "a", ["member", "user:a"]);
    const b = await connect(stub, name, "b", ["member", "user:b"]);
    r.status = { value: [a.status, b.status] };
    a.ws.send("hi");
    r.bGot = { value: await b.next() };
    r.aGot = { value: await a.next() };
    r.info = { value: await stub.wsInfo(name) };
    b.ws.close(1000, "bye");
    r.bClosed = { value: await b.next() };
    r.afterClientClose = { value: await waitFor(stub, name, (i) => i.log.closes.length >= 1) };
    a.ws.send("close-me");
    r.aClosed = { value: await a.next() };
    await sleep(300);
    r.afterObjectClose = { value: await stub.wsInfo(name) };
    return r;
  },
  // An auto-response pair is answered without the object's handler.
  async "websocket-auto"(env, cls, name) {
    const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
    await stub.wsAuto("ping", "pong");
    const a = await connect(stub, name, "a", ["member"]);
    a.ws.send("ping");
    const r = { got: { value: await a.next() } };
    r.info = { value: await stub.wsInfo(name) };
    return r;
  },
  // Hibernation (rule W4): an object whose only work is a socket, idle
  // 15 s and then 75 s: does a message after each run its constructor
  // again, and does the attachment outlive it?
  async "websocket-wake"(env, cls, name) {
    const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
    const a = await connect(stub, name, "a", ["member"]);
    const r = { builtAtStart: { value: await stub.built() } };
    await sleep(15000);
    a.ws.send("after15s");
    r.gotAfter15s = { value: await a.next() };
    r.builtAfter15s = { value: await stub.built() };
    return r;
  },
  // A connection that drops without a close frame (rule W5): its client,
  // another object, is reset with the socket in its field. What does the
  // room's webSocketClose get?
  async "websocket-drop"(env, cls, name) {
    const room = ns(env, cls).get(ns(env, cls).idFromName(name));
    const client = ns(env, cls).get(ns(env, cls).idFromName(name + "-client"));
    const r = { status: { value: await client.holdSocket(cls, name, "a") } };
    try {
      await client.dropSocket();
    } catch {
      // the reset's error: the abort case compares it
    }
    r.after = { value: await waitFor(room, name, (i) => i.log.closes.length >= 1) };
    return r;
  },
  async "websocket-limits"(env, cls, name) {
    const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
    return await stub.wsLimits();
  },
  // A thrown Error with properties: what the caller sees, and how often it ran.
  async "error-props"(env, cls, name) {
    const r = {};
    const variants = {
      retryable: { retryable: true },
      overloaded: { overloaded: true },
      code: { code: "E_CUSTOM" },
      reset: { durableObjectReset: true },
    };
    for (const [k, props] of Object.entries(variants)) {
      const n = name + "-" + k;
      const stub = ns(env, cls).get(ns(env, cls).idFromName(n));
      r[k] = await attempt(() => stub.throwWith(n, "boom " + k, props));
      r[k + "Runs"] = { value: await stub.runs(n, "throwWith") };
    }
    return r;
  },
  async "missing-method"(env, cls, name) {
    const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
    const r = {};
    r.nope = await attempt(() => stub.nope());
    r.after = await attempt(() => stub.ping());
    return r;
  },
  async "stub-options"(env, cls, name) {
    const n = ns(env, cls);
    const id = n.idFromName(name);
    const r = {};
    const opt = async (retry) => {
      const stub = n.get(id, { retry });
      return await stub.ping();
    };
    r.maxRetries11 = await attempt(() => opt({ maxRetries: 11 }));
    r.maxRetriesX = await attempt(() => opt({ maxRetries: "x" }));
    r.timeoutMs100 = await attempt(() => opt({ timeoutMs: 100 }));
    r.timeoutMsX = await attempt(() => opt({ timeoutMs: "x" }));
    r.valid = await attempt(() => opt({ maxRetries: 2, timeoutMs: 1000 }));
    // A misspelt key: the platform ignores it, dosim refuses it (deliberate).
    r.unknownKey = await attempt(() => opt({ maxRetries: 2, maxRetry: 3 }));
    return r;
  },
  async abort(env, cls, name) {
    const r = {};
    for (const [k, reason] of [["reason", "custom reason"], ["none", null]]) {
      const n = name + "-" + k;
      const stub = ns(env, cls).get(ns(env, cls).idFromName(n));
      r[k] = await attempt(() => stub.abort(n, reason));
      r[k + "Runs"] = { value: await ns(env, cls).get(ns(env, cls).idFromName(n)).runs(n, "abort") };
      r[k + "SameStub"] = await attempt(() => stub.ping());
    }
    return r;
  },
  // The first call holds the gate and aborts; three more wait behind it.
  async "queued-at-reset"(env, cls, name) {
    const n = ns(env, cls);
    const id = n.idFromName(name);
    const first = n.get(id);
    const p0 = attempt(() => first.holdThenAbort(name, 300, "reset while others wait"));
    await sleep(50);
    const queued = [1, 2, 3].map(() => attempt(() => n.get(id).count(name)));
    const got = await Promise.all([p0, ...queued]);
    const r = { first: got[0] };
    got.slice(1).forEach((g, i) => (r["queued" + i] = g));
    r.countRuns = { value: await n.get(id).runs(name, "count") };
    return r;
  },
  // A request sleeps (the gate open) while another aborts the object: when
  // does the sleeping one's caller learn of it?
  async "abort-while-running"(env, cls, name) {
    const n = ns(env, cls);
    const id = n.idFromName(name);
    const t0 = Date.now();
    const running = attempt(() => n.get(id).slow(name, 1000)).then((r) => ({ r, ms: Date.now() - t0 }));
    await sleep(100);
    const aborter = await attempt(() => n.get(id).abort(name, "abort from another request"));
    const { r, ms } = await running;
    return {
      running: r,
      runningFailedBeforeItsSleepEnded: { value: ms < 900 },
      aborter,
    };
  },
  // Two read-modify-writes at once: the input gate keeps them apart at a
  // storage operation, not across a timer.
  async "input-gate"(env, cls, name) {
    const n = ns(env, cls);
    const r = {};
    for (const [k, ms] of [["storage", 0], ["timer", 20]]) {
      const id = n.idFromName(name + "-" + k);
      const [a, b] = await Promise.all([n.get(id).incr(ms), n.get(id).incr(ms)]);
      r[k + "Seen"] = { value: [a, b].sort() };
      r[k + "Final"] = { value: await n.get(id).getN() };
    }
    return r;
  },
  // An alarm that fails once: its two deliveries, and getAlarm from a
  // caller while the retry waits.
  async "alarm-retry-once"(env, cls, name) {
    const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
    const at = await stub.armAlarm(name, 100, 1);
    await sleep(1000);
    const during = await stub.getAlarm();
    for (let i = 0; i < 100 && (await stub.alarmLog(name)).deliveries.length < 2; i++) await sleep(100);
    await sleep(300);
    const log = await stub.alarmLog(name);
    return {
      getAlarmDuringWaitIsScheduled: { value: during === at },
      deliveries: { value: log.deliveries.map((d) => ({ retryCount: d.retryCount, isRetry: d.isRetry, getAlarmInsideNull: d.getAlarmInside === null })) },
      afterAll: { value: await stub.getAlarm() },
    };
  },
  // An alarm set in the past is set for now (getAlarm in the same turn)
  // and fires at once.
  async "alarm-past"(env, cls, name) {
    const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
    await stub.armAlarm(name, 3600000, 0); // the handler's log and config
    const secondsAhead = await stub.setAndRead(-60000);
    await sleep(1000);
    return {
      getAlarmSecondsAhead: { value: secondsAhead },
      deliveries: { value: (await stub.alarmLog(name)).deliveries.length },
    };
  },
  // deleteAll deletes the alarm too.
  async "alarm-delete-all"(env, cls, name) {
    const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
    return { after: await attempt(() => stub.deleteAllWithAlarm()) };
  },
  // An alarm set while a failed delivery waits for its retry: getAlarm
  // shows it, but the retry is what comes, counted, and nothing after.
  async "alarm-set-during-retry"(env, cls, name) {
    const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
    await stub.armAlarm(name, 100, 1);
    await sleep(1000); // the first delivery failed; its retry waits 2 s (2.5 s with jitter)
    const secondsAhead = await stub.setAndRead(100);
    await sleep(4000);
    const log = await stub.alarmLog(name);
    return {
      getAlarmSecondsAhead: { value: secondsAhead },
      retryCounts: { value: log.deliveries.map((d) => d.retryCount) },
      afterAll: { value: await stub.getAlarm() },
    };
  },
  // blockConcurrencyWhile held past its 30 s: the call fails, the object
  // is reset, and the same stub fails after (slow: 35 s of real time).
  async "block-timeout"(env, cls, name) {
    const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
    const held = await attempt(() => stub.hold(name, 35000));
    const sameStub = await attempt(() => stub.ping());
    const fresh = await attempt(() => ns(env, cls).get(ns(env, cls).idFromName(name)).ping());
    return { held, sameStub, fresh };
  },
  // An alarm that always fails: every delivery until the platform gives
  // up, the waits, and what getAlarm, a new setAlarm, deleteAlarm and a
  // reset do after that. Three objects at once: "set" sets a new alarm
  // after the give-up, "del" deletes the given-up one, "reset" resets.
  async "alarm-retry-all"(env, cls, name) {
    const n = ns(env, cls);
    const one = async (k) => {
      const on = name + "-" + k;
      let stub = n.get(n.idFromName(on));
      const at = await stub.armAlarm(on, 100, -1);
      // Wait until no delivery came for 100 s (the longest wait, before
      // retryCount 5, is 32 s), at most seven minutes: about
      // three minutes in all.
      let last = 0;
      let quiet = 0;
      for (let i = 0; i < 840 && quiet < 200; i++) {
        await sleep(500);
        const c = (await stub.alarmLog(on)).deliveries.length;
        if (c === last) quiet++;
        else (last = c), (quiet = 0);
      }
      const log = await stub.alarmLog(on);
      const ds = log.deliveries;
      const r = {};
      r[k + "Deliveries"] = { value: ds.length };
      r[k + "RetryCounts"] = { value: ds.map((d) => d.retryCount) };
      // Wait i (before retryCount i+1) is 2 s·2^i. On the key-value-backed
      // class (inMemory storage) exactly: measured to the millisecond on
      // workerd 1.20261117.1 as 2001, 4001, 8206, 16001, 32001 (the 206 ms
      // at 8 s struck every alarm of the run at once: a stall); so the
      // waits in whole seconds too. On the SQLite-backed class (localDisk)
      // up to a quarter more (RETRY_JITTER_FACTOR). Half a second of slack
      // for the real clock.
      const waits = ds.slice(1).map((d, i) => d.at - ds[i].at);
      const jitter = cls === "sql" ? 0.25 : 0;
      if (cls === "kv") r[k + "WaitsS"] = { value: waits.map((w) => Math.round(w / 1000)) };
      r[k + "WaitsAreTheBackoff"] = { value: waits.every((w, i) => w >= 2000 * 2 ** i - 50 && w <= 2000 * 2 ** i * (1 + jitter) + 500) };
      const afterAll = await stub.getAlarm();
      r[k + "AfterAllIsScheduled"] = { value: afterAll === at };
      r[k + "AfterAllIsNull"] = { value: afterAll === null };
      if (k === "reset") {
        // Does the given-up alarm outlive a reset, or fire again?
        await attempt(() => stub.abort(on, "reset after the give-up"));
        stub = n.get(n.idFromName(on));
        r.resetAfterResetIsNull = { value: (await stub.getAlarm()) === null };
        await sleep(3000);
        r.resetDeliveriesAfterReset = { value: (await stub.alarmLog(on)).deliveries.length };
      } else if (k === "del") {
        r.delDelete = await attempt(() => stub.deleteAlarm());
        r.delAfterDeleteIsNull = { value: (await stub.getAlarm()) === null };
      } else {
        const again = on + "-again";
        const at2 = await stub.armAlarm(again, 100, 0);
        r.setGetAlarmIsNew = { value: (await stub.getAlarm()) === at2 };
        for (let i = 0; i < 50 && (await stub.alarmLog(again)).deliveries.length < 1; i++) await sleep(100);
        await sleep(300);
        const ds2 = (await stub.alarmLog(again)).deliveries;
        r.setAgainDeliveries = { value: ds2.map((d) => ({ retryCount: d.retryCount, isRetry: d.isRetry })) };
        r.setAgainAfterIsNull = { value: (await stub.getAlarm()) === null };
      }
      return r;
    };
    const all = await Promise.all(["set", "del", "reset"].map(one));
    return Object.assign({}, ...all);
  },
};

export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    const m = url.pathname.match(/^\/case\/([a-z0-9-]+)$/);
    const cls = url.searchParams.get("class") || "sql";
    const name = (m ? m[1] : "") + "-" + cls + "-" + crypto.randomUUID();
    if (m && m[1].startsWith("storage-")) {
      const stub = ns(env, cls).get(ns(env, cls).idFromName(name));
      return Response.json(await stub.storage(m[1].slice("storage-".length)));
    }
    if (url.pathname === "/version") return new Response("ok");
    const c = m && cases[m[1]];
    if (!c) return new Response("no such case", { status: 404 });
    return Response.json(await c(env, cls, name));
  },
};
