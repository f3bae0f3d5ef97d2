/**
 * tasklog for opencode: records opencode's prompts, tool calls and file writes in tasklog's log
 * through `replay serve`'s socket, and puts the rules tasklog delivers in front of the model: the
 * rules that apply to the prompt as a part of the user's message (synthetic: opencode does not
 * show it), the rules a tool call brings in (a file read under a path-scoped rule) appended to
 * that tool's output. Both stay in opencode's session, so the model sees each once in every
 * later request.
 *
 * Where: the socket is $TASKLOG_SOCKET, else the socket of the database $TASKLOG_DB, else of the
 * database in tasklog.json beside this file (`replay install opencode` writes it), else of the
 * hooks' default database ($XDG_DATA_HOME/tasklog/tasklog.db, default ~/.local/share/tasklog).
 * When nothing listens there, the plugin starts `replay serve` for that database (the replay of
 * $TASKLOG_REPLAY, else of tasklog.json, else the one on $PATH), as the command hooks do.
 *
 * Protocol: JSON objects, one per line, each request with an id its response echoes
 * (docs/server.md). Everything fails open: an event's calls share a budget of 5 s
 * ($TASKLOG_OPENCODE_BUDGET_MS); when the server does not answer within it, or cannot be reached
 * or started, opencode goes on as if this plugin were not there, the error goes to stderr, and
 * the plugin leaves the server alone for a minute, so a hung server costs one slow event, not
 * every event.
 *
 * Events are keyed by opencode's own ids: its session id, the id of the user's message and the
 * model's tool call id, so that a repeated event is recorded once.
 *
 * Usage: `replay install opencode`, which writes this file as .opencode/plugin/tasklog.ts.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

type Response = { id: number; result?: any; error?: { code: string; message: string } };

const AGENT = "opencode";
const WRITE_TOOLS: Record<string, string> = { write: "create", edit: "edit" };
const BUDGET_MS = Number(process.env.TASKLOG_OPENCODE_BUDGET_MS) || 5000;
const SKIP_MS = 60_000; // how long a server that failed to answer is left alone
const START_WAIT_MS = 2000; // how long a started server gets to listen
const MAX_SOCKET_PATH = 100; // as session/serve/wire: longer paths hash into the private folder

/** settings reads tasklog.json beside this file, which `replay install opencode` writes. */
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
				await this.send("hello", { version: 1, client: "opencode tasklog plugin" }, deadline);
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

/** partID is a new id of a message part, ordered after the parts made before it, as opencode's are. */
function partID(): string {
	const time = (BigInt(Date.now()) * 0x1000n).toString(16).padStart(12, "0").slice(-12);
	const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	let rand = "";
	for (let i = 0; i < 14; i++) rand += chars[Math.floor(Math.random() * chars.length)];
	return `prt_${time}${rand}`;
}

type Hooks = Record<string, (input: any, output: any) => Promise<void>>;

/** TasklogPlugin is opencode's plugin: ctx.directory is the folder opencode works in. */
export const TasklogPlugin = async (ctx: { directory: string; worktree?: string }): Promise<Hooks> => {
	const conf = settings();
	const db = defaultDB(conf);
	const sock = process.env.TASKLOG_SOCKET || socketPath(db);
	const replay = process.env.TASKLOG_REPLAY || conf.replay || "replay";
	const client = new TasklogClient(sock, db, replay);
	const opened = new Set<string>(); // sessions opened on the server by this process
	const prompts = new Map<string, string>(); // session → the id of its current user message

	// Each event's calls share one budget; a failure is reported and swallowed (fail open).
	const budget = () => Date.now() + BUDGET_MS;
	const call = async (session: string, op: string, fields: Record<string, unknown>, deadline: number) => {
		try {
			if (!opened.has(session)) {
				await client.call("open", { agent: AGENT, session, roots: [ctx.directory], cwd: ctx.directory }, deadline);
				opened.add(session);
			}
			return await client.call(op, { agent: AGENT, session, ...fields }, deadline);
		} catch (err) {
			console.error(`tasklog: ${op}: ${(err as Error).message}`);
			return undefined;
		}
	};
	const record = (session: string, key: string, type: string, data: unknown, deadline: number, trigger = false) =>
		call(session, "record", { events: [{ key: `${AGENT}/${session}/${key}`, trigger, type, data }] }, deadline);
	const deliver = async (session: string, hook: string, channel: string, key: string, deadline: number): Promise<string> => {
		const res = await call(session, "deliver", { hook, channel, key: `${AGENT}/${session}/${key}` }, deadline);
		return res?.text ?? "";
	};

	return {
		"chat.message": async (input: any, output: any) => {
			const session: string = input.sessionID;
			const id: string = output.message?.id ?? input.messageID ?? "";
			if (!session || !id) return;
			prompts.set(session, id);
			const text = (output.parts ?? [])
				.filter((p: any) => p.type === "text" && !p.synthetic && typeof p.text === "string")
				.map((p: any) => p.text)
				.join("\n");
			const deadline = budget();
			await record(session, `input/${id}`, "user_message", { text }, deadline, true);
			// The prompt's rules as a part of the user's message, which opencode keeps in the
			// session: every later request carries them once, a continued session (run -c) too.
			const rules = await deliver(session, "chat.message", "prompt", `prompt/${id}`, deadline);
			if (rules && Array.isArray(output.parts)) {
				output.parts.push({ id: partID(), sessionID: session, messageID: id, type: "text", text: rules, synthetic: true });
			}
		},

		"tool.execute.before": async (input: any, output: any) => {
			if (!input.sessionID || !input.callID) return;
			await record(input.sessionID, `tool/${input.callID}`, "tool_call",
				{ tool: input.tool, id: input.callID, params: output?.args ?? {} }, budget(), true);
		},

		"tool.execute.after": async (input: any, output: any) => {
			const session: string = input.sessionID;
			if (!session || !input.callID) return;
			const deadline = budget();
			const op = WRITE_TOOLS[input.tool];
			const file = input.args?.filePath;
			if (op && typeof file === "string") {
				await record(session, `write/${input.callID}`, "file_write", { path: file, op }, deadline);
			}
			const rules = await deliver(session, "tool.execute.after", "tool", `tool/${input.callID}`, deadline);
			if (rules && typeof output?.output === "string") {
				output.output += "\n\n" + rules;
			}
		},

		event: async ({ event }: { event: any }) => {
			if (event?.type !== "session.idle") return;
			const session: string = event.properties?.sessionID;
			const prompt = session ? prompts.get(session) : undefined;
			if (!prompt) return;
			await record(session, `stop/${prompt}`, "agent_stopped", { scope: "turn" }, budget());
		},
	};
};
