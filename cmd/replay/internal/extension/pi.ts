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

const AGENT = "pi";
const BUDGET_MS = Number(process.env.TASKLOG_PI_BUDGET_MS) || 5000;
const CLIENT = "pi tasklog extension";

// tasklog: the socket client (client.ts) is put here.

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
