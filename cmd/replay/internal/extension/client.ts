/**
 * The socket client pi's extension and opencode's plugin share: it speaks replay serve's protocol
 * (docs/server.md) over the database's socket, starts a server when nothing listens, keeps each
 * event's calls within the agent file's BUDGET_MS, and leaves a server that did not answer alone
 * for a minute. It is no module of its own: cmd/replay puts it into each agent's file in place of
 * the marker line, after the agent file's imports and its AGENT, BUDGET_MS and CLIENT.
 */
type Response = { id: number; result?: any; error?: { code: string; message: string } };

const WRITE_TOOLS: Record<string, string> = { write: "create", edit: "edit" };
const SKIP_MS = 60_000; // how long a server that failed to answer is left alone
const START_WAIT_MS = 2000; // how long a started server gets to listen
const MAX_SOCKET_PATH = 100; // as session/serve/wire: longer paths hash into the private folder

/** settings reads tasklog.json beside this file, which `replay install` writes beside it. */
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
				await this.send("hello", { version: 1, client: CLIENT }, deadline);
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
