/**
 * tasklog for pi: records pi's prompts, tool calls, writes and stops in tasklog's log through
 * `replay serve`'s socket, and puts the rules tasklog delivers in front of the model: the
 * rules that apply to the prompt as a message before the agent starts, the rules a tool call
 * brings in (a file read under a path-scoped rule) appended to that tool's result.
 *
 * The socket: $TASKLOG_SOCKET, else "$TASKLOG_DB.sock". Run `replay serve --db DB` first.
 * Protocol: JSON objects, one per line, each request with an id its response echoes (README,
 * "The resident server: replay serve"). Everything fails open: when the server cannot be
 * reached or answers with an error, pi goes on as if this extension were not there, and the
 * error goes to stderr.
 *
 * Usage: pi -e tasklog.ts …
 */
import * as net from "node:net";

type Response = { id: number; result?: any; error?: { code: string; message: string } };

const AGENT = "pi";
const WRITE_TOOLS: Record<string, string> = { write: "create", edit: "edit" };

/** A connection to replay serve: one request at a time is not required, responses come in order. */
class TasklogClient {
	private sock: net.Socket | null = null;
	private buf = "";
	private next = 0;
	private waiting = new Map<number, (r: Response) => void>();

	constructor(private path: string) {}

	private connect(): Promise<void> {
		return new Promise((resolve, reject) => {
			const s = net.createConnection(this.path);
			s.setEncoding("utf8");
			s.once("connect", () => {
				this.sock = s;
				resolve();
			});
			s.once("error", (err) => {
				this.fail(err);
				reject(err);
			});
			s.on("data", (chunk: string) => this.read(chunk));
			s.on("close", () => this.fail(new Error("connection closed")));
		});
	}

	private read(chunk: string) {
		this.buf += chunk;
		let nl: number;
		while ((nl = this.buf.indexOf("\n")) >= 0) {
			const line = this.buf.slice(0, nl);
			this.buf = this.buf.slice(nl + 1);
			if (!line.trim()) continue;
			const resp = JSON.parse(line) as Response;
			const done = this.waiting.get(resp.id);
			this.waiting.delete(resp.id);
			done?.(resp);
		}
	}

	private fail(err: Error) {
		this.sock = null;
		for (const [id, done] of this.waiting) {
			done({ id, error: { code: "unreachable", message: err.message } });
		}
		this.waiting.clear();
	}

	/** Sends one request and resolves with its result; rejects with the server's error. */
	async call(op: string, fields: Record<string, unknown> = {}): Promise<any> {
		if (!this.sock) {
			await this.connect();
			await this.send("hello", { version: 1, client: "pi tasklog extension" });
		}
		return this.send(op, fields);
	}

	private send(op: string, fields: Record<string, unknown>): Promise<any> {
		const id = ++this.next;
		return new Promise((resolve, reject) => {
			this.waiting.set(id, (r) => (r.error ? reject(new Error(`${r.error.code}: ${r.error.message}`)) : resolve(r.result)));
			this.sock!.write(JSON.stringify({ id, op, ...fields, deadline_ms: 5000 }) + "\n");
		});
	}

	close() {
		this.sock?.end();
		this.sock = null;
	}
}

export default function tasklog(pi: any) {
	const path = process.env.TASKLOG_SOCKET || (process.env.TASKLOG_DB ? process.env.TASKLOG_DB + ".sock" : "");
	if (!path) {
		console.error("tasklog: set TASKLOG_SOCKET or TASKLOG_DB; recording nothing");
		return;
	}
	const client = new TasklogClient(path);
	let session = "";
	let prompts = 0;

	// Each call names the session; a failure is reported and swallowed (fail open).
	const call = async (op: string, fields: Record<string, unknown>) => {
		try {
			return await client.call(op, { agent: AGENT, session, ...fields });
		} catch (err) {
			console.error(`tasklog: ${op}: ${(err as Error).message}`);
			return undefined;
		}
	};
	const record = (key: string, type: string, data: unknown, trigger = false) =>
		call("record", { events: [{ key: `${AGENT}/${session}/${key}`, trigger, type, data }] });
	const deliver = async (hook: string, channel: string, key: string): Promise<string> => {
		const res = await call("deliver", { hook, channel, key: `${AGENT}/${session}/${key}` });
		return res?.text ?? "";
	};

	pi.on("session_start", async (_event: any, ctx: any) => {
		session = ctx.sessionManager.getSessionId();
		await call("open", { roots: [ctx.cwd], cwd: ctx.cwd });
	});

	pi.on("input", async (event: any) => {
		prompts++;
		await record(`input/${prompts}`, "user_message", { text: event.text ?? "" }, true);
	});

	pi.on("before_agent_start", async () => {
		const text = await deliver("before_agent_start", "prompt", `prompt/${prompts}`);
		if (text) {
			return { message: { customType: "tasklog-rules", content: text, display: false } };
		}
	});

	pi.on("tool_call", async (event: any) => {
		await record(`tool/${event.toolCallId}`, "tool_call",
			{ tool: event.toolName, id: event.toolCallId, params: event.input ?? {} }, true);
	});

	pi.on("tool_result", async (event: any) => {
		const op = WRITE_TOOLS[event.toolName];
		if (op && !event.isError && typeof event.input?.path === "string") {
			await record(`write/${event.toolCallId}`, "file_write", { path: event.input.path, op });
		}
		const text = await deliver("tool_result", "tool", `tool/${event.toolCallId}`);
		if (text) {
			return { content: [...(event.content ?? []), { type: "text", text }] };
		}
	});

	pi.on("agent_end", async () => {
		await record(`stop/${prompts}`, "agent_stopped", { scope: "turn" });
	});

	pi.on("session_shutdown", async () => {
		await record("end", "agent_stopped", { scope: "task" });
		client.close();
	});
}
