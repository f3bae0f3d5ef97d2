/**
 * tasklog for pi: records pi's prompts, tool calls, writes and stops in tasklog's log through
 * `replay serve`'s socket, and puts the rules tasklog delivers in front of the model: the
 * rules that apply to the prompt as a message before the agent starts, the rules a tool call
 * brings in (a file read under a path-scoped rule) appended to that tool's result.
 *
 * Where: the socket is $TASKLOG_SOCKET, else the socket of the database $TASKLOG_DB, else of the
 * database in tasklog.json beside this file (`replay install pi` writes it), else of the hooks'
 * default database ($XDG_DATA_HOME/tasklog/tasklog.db, default ~/.local/share/tasklog). When
 * nothing listens there, the extension starts `replay serve` for that database (the replay of
 * $TASKLOG_REPLAY, else of tasklog.json, else the one on $PATH), as the command hooks do.
 *
 * Protocol: JSON objects, one per line, each request with an id its response echoes
 * (docs/server.md). Everything fails open: an event's calls share a budget of 5 s
 * ($TASKLOG_PI_BUDGET_MS); when the server does not answer within it, or cannot be reached or
 * started, pi goes on as if this extension were not there, the error goes to stderr, and the
 * extension leaves the server alone for a minute, so a hung server costs one slow event, not
 * every event.
 *
 * Events are keyed by what pi keeps in its session file (its session id and the id of the entry
 * a prompt follows), so that `pi -c` continuing a session records its prompts as new ones and a
 * repeated event as the same one.
 *
 * Usage: pi -e tasklog.ts …, or `replay install pi`.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

type Response = { id: number; result?: any; error?: { code: string; message: string } };

const AGENT = "pi";
const WRITE_TOOLS: Record<string, string> = { write: "create", edit: "edit" };
const BUDGET_MS = Number(process.env.TASKLOG_PI_BUDGET_MS) || 5000;
const SKIP_MS = 60_000; // how long a server that failed to answer is left alone
const START_WAIT_MS = 2000; // how long a started server gets to listen
const MAX_SOCKET_PATH = 100; // as session/serve/wire: longer paths hash into the private folder

/** settings reads tasklog.json beside this file, which `replay install pi` writes. */
function settings(): { replay?: string; db?: string } {
	try {
		const here = path.dirname(new URL(import.meta.url).pathname);
		return JSON.parse(fs.readFileSync(path.join(here, "tasklog.json"), "utf8"));
	} catch {
		return {};
	}
}

/** defaultDB is the hooks' database, as session/serve/wire.DefaultDB finds it. */
function defaultDB(conf: { db?: string }): string {
	if (process.env.TASKLOG_DB) return process.env.TASKLOG_DB;
	if (conf.db) return conf.db;
	const data = process.env.XDG_DATA_HOME || path.join(os.homedir(), ".local", "share");
	return path.join(data, "tasklog", "tasklog.db");
}

/** socketPath is the database's socket, as session/serve/wire.SocketPath names it. */
function socketPath(db: string): string {
	const abs = path.resolve(db);
	if ((abs + ".sock").length <= MAX_SOCKET_PATH) return abs + ".sock";
	let h = 0xcbf29ce484222325n; // FNV-1a, 64 bits
	for (const b of Buffer.from(abs)) {
		h ^= BigInt(b);
		h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
	}
	const uid = typeof process.getuid === "function" ? process.getuid() : 0;
	return path.join(os.tmpdir(), `tasklog-${uid}`, h.toString(16).padStart(16, "0") + ".sock");
}

function nothingListens(err: any): boolean {
	return err?.code === "ENOENT" || err?.code === "ECONNREFUSED";
}

/** A connection to replay serve: responses come in order, each names its request. */
class TasklogClient {
	private sock: net.Socket | null = null;
	private buf = "";
	private next = 0;
	private waiting = new Map<number, (r: Response) => void>();
	private skipUntil = 0;

	constructor(private sockPath: string, private db: string, private replay: string) {}

	private connect(deadline: number): Promise<void> {
		return new Promise((resolve, reject) => {
			const s = net.createConnection(this.sockPath);
			s.setEncoding("utf8");
			const timer = setTimeout(() => {
				s.destroy();
				reject(new Error("no answer from replay serve"));
			}, Math.max(0, deadline - Date.now()));
			s.once("connect", () => {
				clearTimeout(timer);
				this.sock = s;
				resolve();
			});
			s.once("error", (err) => {
				clearTimeout(timer);
				this.fail(err);
				reject(err);
			});
			s.on("data", (chunk: string) => this.read(chunk));
			s.on("close", () => this.fail(new Error("connection closed")));
		});
	}

	/** connectOrStart connects, starting replay serve when nothing listens on the socket. */
	private async connectOrStart(deadline: number): Promise<void> {
		try {
			return await this.connect(deadline);
		} catch (err) {
			if (!nothingListens(err)) throw err;
		}
		const child = spawn(this.replay, ["serve", "--db", this.db], { detached: true, stdio: "ignore" });
		child.on("error", () => {}); // reported below as a server that did not come up
		child.unref();
		const until = Math.min(deadline, Date.now() + START_WAIT_MS);
		for (let pause = 1; ; pause = Math.min(2 * pause, 20)) {
			try {
				return await this.connect(deadline);
			} catch (err) {
				if (!nothingListens(err) || Date.now() + pause >= until) {
					throw new Error(`started ${this.replay} serve --db ${this.db}, which did not come up: ${(err as Error).message}`);
				}
			}
			await new Promise((r) => setTimeout(r, pause));
		}
	}

	private read(chunk: string) {
		this.buf += chunk;
		let nl: number;
		while ((nl = this.buf.indexOf("\n")) >= 0) {
			const line = this.buf.slice(0, nl);
			this.buf = this.buf.slice(nl + 1);
			if (!line.trim()) continue;
			let resp: Response;
			try {
				resp = JSON.parse(line) as Response;
			} catch {
				this.drop(new Error("replay serve answered with a line that is not JSON"));
				return;
			}
			const done = this.waiting.get(resp.id);
			this.waiting.delete(resp.id);
			done?.(resp);
		}
	}

	private fail(err: Error) {
		this.sock = null;
		this.buf = "";
		for (const [id, done] of this.waiting) {
			done({ id, error: { code: "unreachable", message: err.message } });
		}
		this.waiting.clear();
	}

	/** drop closes the connection, failing what waits on it. */
	private drop(err: Error) {
		const s = this.sock;
		this.fail(err);
		s?.destroy();
	}

	/**
	 * Sends one request and resolves with its result; rejects with the server's error, or when
	 * the server does not answer by the deadline (then the server is skipped for SKIP_MS).
	 */
	async call(op: string, fields: Record<string, unknown>, deadline: number): Promise<any> {
		if (Date.now() < this.skipUntil) {
			throw new Error("replay serve did not answer a moment ago; skipping it for now");
		}
		try {
			if (!this.sock) {
				await this.connectOrStart(deadline);
				await this.send("hello", { version: 1, client: "pi tasklog extension" }, deadline);
			}
			return await this.send(op, fields, deadline);
		} catch (err) {
			if ((err as Error).message.startsWith("no answer") || (err as Error).message.includes("did not come up")) {
				this.skipUntil = Date.now() + SKIP_MS;
			}
			throw err;
		}
	}

	private send(op: string, fields: Record<string, unknown>, deadline: number): Promise<any> {
		const id = ++this.next;
		const left = Math.max(1, deadline - Date.now());
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				this.waiting.delete(id);
				this.drop(new Error("no answer from replay serve"));
				reject(new Error(`no answer from replay serve within ${BUDGET_MS} ms`));
			}, left);
			this.waiting.set(id, (r) => {
				clearTimeout(timer);
				r.error ? reject(new Error(`${r.error.code}: ${r.error.message}`)) : resolve(r.result);
			});
			this.sock!.write(JSON.stringify({ id, op, ...fields, deadline_ms: left }) + "\n");
		});
	}

	close() {
		this.sock?.end();
		this.sock = null;
	}
}

export default function tasklog(pi: any) {
	const conf = settings();
	const db = defaultDB(conf);
	const sock = process.env.TASKLOG_SOCKET || socketPath(db);
	const replay = process.env.TASKLOG_REPLAY || conf.replay || "replay";
	const client = new TasklogClient(sock, db, replay);
	let session = "";
	let prompt = ""; // the key of the current prompt: the session entry it follows

	// Each event's calls share one budget; a failure is reported and swallowed (fail open).
	const budget = () => Date.now() + BUDGET_MS;
	const call = async (op: string, fields: Record<string, unknown>, deadline: number) => {
		try {
			return await client.call(op, { agent: AGENT, session, ...fields }, deadline);
		} catch (err) {
			console.error(`tasklog: ${op}: ${(err as Error).message}`);
			return undefined;
		}
	};
	const record = (key: string, type: string, data: unknown, deadline: number, trigger = false) =>
		call("record", { events: [{ key: `${AGENT}/${session}/${key}`, trigger, type, data }] }, deadline);
	const deliver = async (hook: string, channel: string, key: string, deadline: number): Promise<string> => {
		const res = await call("deliver", { hook, channel, key: `${AGENT}/${session}/${key}` }, deadline);
		return res?.text ?? "";
	};

	pi.on("session_start", async (_event: any, ctx: any) => {
		session = ctx.sessionManager.getSessionId();
		await call("open", { roots: [ctx.cwd], cwd: ctx.cwd }, budget());
	});

	pi.on("input", async (event: any, ctx: any) => {
		// The entry the prompt follows is in the session file: a prompt of a continued session
		// (pi -c) follows another entry than any prompt before it, in this process or an earlier one.
		prompt = ctx.sessionManager.getLeafId() ?? "start";
		await record(`input/${prompt}`, "user_message", { text: event.text ?? "" }, budget(), true);
	});

	pi.on("before_agent_start", async () => {
		const text = await deliver("before_agent_start", "prompt", `prompt/${prompt}`, budget());
		if (text) {
			return { message: { customType: "tasklog-rules", content: text, display: false } };
		}
	});

	pi.on("tool_call", async (event: any) => {
		await record(`tool/${event.toolCallId}`, "tool_call",
			{ tool: event.toolName, id: event.toolCallId, params: event.input ?? {} }, budget(), true);
	});

	pi.on("tool_result", async (event: any) => {
		const deadline = budget();
		const op = WRITE_TOOLS[event.toolName];
		if (op && !event.isError && typeof event.input?.path === "string") {
			await record(`write/${event.toolCallId}`, "file_write", { path: event.input.path, op }, deadline);
		}
		const text = await deliver("tool_result", "tool", `tool/${event.toolCallId}`, deadline);
		if (text) {
			return { content: [...(event.content ?? []), { type: "text", text }] };
		}
	});

	pi.on("agent_end", async () => {
		await record(`stop/${prompt}`, "agent_stopped", { scope: "turn" }, budget());
	});

	pi.on("session_shutdown", async () => {
		await record(`end/${prompt}`, "agent_stopped", { scope: "task" }, budget());
		client.close();
	});
}
