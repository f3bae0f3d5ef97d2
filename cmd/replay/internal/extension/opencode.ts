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

const AGENT = "opencode";
const BUDGET_MS = Number(process.env.TASKLOG_OPENCODE_BUDGET_MS) || 5000;
const CLIENT = "opencode tasklog plugin";

// tasklog: the socket client (client.ts) is put here.

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
