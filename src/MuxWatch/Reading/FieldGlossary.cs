namespace MuxWatch.Reading;

/// <summary>What each field of a StackExchange.Redis timeout message means, across client generations.</summary>
public static class FieldGlossary
{
    private static readonly Dictionary<string, string> Meanings = new(StringComparer.Ordinal)
    {
        ["inst"] = "operations since the last heartbeat",
        ["qu"] = "queued, not yet written",
        ["qs"] = "written, awaiting a reply",
        ["aw"] = "the single writer lock is held",
        ["bw"] = "backlog writer state",
        ["rs"] = "reader state (CompletePendingMessage* = thread theft)",
        ["ws"] = "writer state",
        ["in"] = "bytes received, not yet read by the client",
        ["in-pipe"] = "bytes in the read pipe, not yet parsed",
        ["out-pipe"] = "bytes in the write pipe, not yet sent",
        ["last-in"] = "size of the last reply, bytes",
        ["cur-in"] = "bytes of the reply being read",
        ["sync-ops"] = "synchronous operations, lifetime",
        ["async-ops"] = "asynchronous operations, lifetime",
        ["serverEndpoint"] = "the Redis endpoint",
        ["conn-sec"] = "seconds the connection has been up",
        ["aoc"] = "AbortOnConnectFail (1 = on)",
        ["mc"] = "connect attempts / completed / closes",
        ["lm"] = "multiplexers in the process: alive / created / disposed / finalized (2.12+, written once more than one was created; many created is a multiplexer per call, which should be one shared)",
        ["mgr"] = "the client's dedicated thread pool (2.x): free of total",
        ["clientName"] = "the client name",
        ["IOCP"] = "I/O threads: Busy = Max - Available",
        ["WORKER"] = "worker threads: Busy = Max - Available",
        ["POOL"] = "thread pool: threads, queued and completed items",
        ["v"] = "client version",
        ["phys"] = "2.0.571 and 2.0.588 only (write timeouts): the physical connection's state, which dates the message when it carries no v:",
        ["outbound"] = "KiB sent on the connection while the request waited",
        ["inbound"] = "KiB received on the connection while the request waited",
        ["elapsed"] = "ms the request had waited when noticed",
        ["timeout"] = "the configured timeout, ms",
        ["command"] = "the command",
        ["next"] = "the next command in the queue",
        ["active"] = "the command being processed",
        ["Local-CPU"] = "machine CPU use (1.x/2.x)",
        ["queue"] = "1.x: commands queued in total",
        ["qc"] = "1.x: completions not yet processed",
        ["wr"] = "1.x: active writers",
        ["wq"] = "1.x: connections waiting for the writer",
        ["ar"] = "1.x: active readers",
        ["err"] = "1.x: last error",
        ["keyHashSlot"] = "the key's cluster hash slot",
        ["last-heartbeat"] = "time since the last heartbeat",
        ["last-read"] = "time since the last read",
        ["last-write"] = "time since the last write",
        ["unanswered-write"] = "time since a write that is still unanswered",
        ["keep-alive"] = "keep-alive interval",
        ["state"] = "connection state",
        ["origin"] = "where the failure was noticed",
        ["outstanding"] = "commands outstanding when the connection failed",
    };

    /// <summary>Every field name the glossary explains.</summary>
    internal static IEnumerable<string> Names => Meanings.Keys;

    /// <summary>True for a field name the client writes (any generation), the pool tuples included.</summary>
    public static bool Knows(string name) => Meanings.ContainsKey(name);

    /// <summary>The meaning of <paramref name="field"/>, or null for a field it does not know.</summary>
    public static string? Meaning(string field) =>
        Meanings.TryGetValue(field, out var meaning) ? meaning : null;
}
