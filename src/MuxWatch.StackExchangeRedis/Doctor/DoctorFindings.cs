using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.StackExchangeRedis.Doctor;

/// <summary>
/// What the doctor's readings say, as the person on call would want it said: each finding with its one line of
/// advice, warnings for what stalls clients or is about to. Thresholds follow the shipped alerts where one exists
/// (a fork over 0.5 s is <c>MuxWatchSlowFork</c>'s).
/// </summary>
internal static class DoctorFindings
{
    private const double SlowForkSeconds = 0.5;
    private const long SlowCommandMs = 100;
    private const long LargeOutputBytes = 1_000_000;
    private const long LargeDatasetBytes = 1_000_000_000;
    private const int MaxListed = 5;

    /// <summary>The most bytes believed of a server's memory figure: a petabyte; more (or less than none) is a broken or hostile server.</summary>
    private const long MaxBytes = 1L << 50;

    /// <summary>The longest fork believed, in µs: an hour (a real one of many seconds is already a disaster), as the projection believes it.</summary>
    private const long MaxForkMicros = ForkCost.PlausibleForkMicroseconds;

    /// <summary>The most of anything counted believed (evictions, delayed fsyncs, seconds of lag).</summary>
    private const long MaxCount = 1L << 50;

    public static List<DoctorFinding> From(DoctorReadings read)
    {
        var found = new List<DoctorFinding>();
        if (read.Info is { } values)
        {
            var info = new Figures(values, read.Unread);
            Topic(read, "role", () => Role(info, found));
            Topic(read, "memory", () => Memory(info, read.Config, found));
            Topic(read, "fork", () => Fork(info, found));
            Topic(read, "persistence", () => Persistence(info, read.Config, found));
        }

        if (read.Slowlog is { } slowlog)
        {
            Topic(read, "slow-log", () => SlowCommands(slowlog, read.Config, found));
        }

        if (read.Latency is { } latency)
        {
            Topic(read, "latency", () => LatencyEvents(latency, found));
        }

        if (read.Clients is { } clients)
        {
            Topic(read, "clients", () => Clients(clients, found));
        }

        if (read.Config.TryGetValue("latency-monitor-threshold", out var threshold))
        {
            found.Add(threshold == "0"
                ? new DoctorFinding("latency-monitor", false, "the latency monitor is off (latency-monitor-threshold 0): forks and slow events are not timed",
                    "CONFIG SET latency-monitor-threshold 100: LATENCY LATEST and MuxWatch then time every fork and event over 100 ms")
                : new DoctorFinding("latency-monitor", false, $"the latency monitor times events over {Shown(threshold)} ms", null));
        }

        return [.. found.OrderByDescending(f => f.Warning)];
    }

    /// <summary>One topic's findings; what the server sent that no finding can be made of is listed as unread, and the other topics go on.</summary>
    private static void Topic(DoctorReadings read, string topic, Action find)
    {
        try
        {
            find();
        }
        catch (Exception ex) when (ex is FormatException or OverflowException or ArgumentException or InvalidOperationException or IndexOutOfRangeException or InvalidCastException)
        {
            read.Unread.Add($"{topic}: what the server sent made no finding ({ex.GetType().Name})");
        }
    }

    /// <summary>
    /// A server's INFO fields, each figure believed only within its bounds: a negative size, an astronomical fork or a
    /// field repeated with another value is listed once as unread, never printed as "-100% of maxmemory".
    /// </summary>
    private sealed class Figures(Dictionary<string, string> values, List<string> unread)
    {
        private readonly HashSet<string> _noted = new(StringComparer.Ordinal);

        /// <summary>The field as text, cleaned and bounded, or null when absent.</summary>
        public string? Text(string field) => SlowlogReply.Text(values.GetValueOrDefault(field));

        /// <summary>The field as a number from 0 to <paramref name="max"/>, or null when absent or not believed (noted).</summary>
        public long? Number(string field, long max) => values.TryGetValue(field, out var text) ? Believed(text, max, $"INFO {field}") : null;

        public long? Believed(string? text, long max, string what)
        {
            if (text is null)
            {
                return null;
            }

            if (long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var n) && n >= 0 && n <= max)
            {
                return n;
            }

            if (_noted.Add(what))
            {
                unread.Add($"{what}: \"{SlowlogReply.Text(text, 32)}\" cannot be believed; left out");
            }

            return null;
        }

        /// <summary>A replica line of INFO (<c>slave0:ip=...,port=...,state=...,lag=...</c>), its first value of each key kept.</summary>
        public Dictionary<string, string> Pairs(string field)
        {
            var pairs = new Dictionary<string, string>(StringComparer.Ordinal);
            foreach (var part in (values.GetValueOrDefault(field) ?? string.Empty).Split(','))
            {
                if (part.Split('=', 2) is [var key, var value])
                {
                    pairs.TryAdd(key, value);
                }
            }

            return pairs;
        }

        public bool Has(string field) => values.ContainsKey(field);
    }

    private static string Shown(string? text) => SlowlogReply.Text(text) ?? "?";

    private static void Role(Figures info, List<DoctorFinding> found)
    {
        switch (info.Text("role"))
        {
            case "master":
                var replicas = Enumerable.Range(0, 16).Select(i => $"slave{i}").TakeWhile(info.Has).Select(info.Pairs).ToList();
                var lagging = replicas.Where(r => info.Believed(r.GetValueOrDefault("lag"), MaxCount, "INFO replica lag") is > 10 || r.GetValueOrDefault("state") is { } state && state != "online").ToList();
                var listed = string.Join(", ", replicas.Select(r => $"{Shown(r.GetValueOrDefault("ip"))}:{Shown(r.GetValueOrDefault("port"))} {Shown(r.GetValueOrDefault("state"))}, lag {Shown(r.GetValueOrDefault("lag"))} s"));
                found.Add(lagging.Count > 0
                    ? new DoctorFinding("role", true, $"primary with {Count(replicas.Count, "replica")} ({listed}); {Count(lagging.Count, "replica")} behind or not online",
                        "a replica that lags or resyncs serves stale data and cannot take over cleanly: check its network and the primary's output buffer limits (client-output-buffer-limit replica)")
                    : new DoctorFinding("role", false, replicas.Count == 0 ? "primary, no replicas" : $"primary with {Count(replicas.Count, "replica")} ({listed})", null));
                break;
            case "slave":
                var primary = $"{Shown(info.Text("master_host"))}:{Shown(info.Text("master_port"))}";
                var up = info.Text("master_link_status") == "up";
                found.Add(up
                    ? new DoctorFinding("role", false, $"replica of {primary}, link up, last heard {Shown(info.Text("master_last_io_seconds_ago"))} s ago", null)
                    : new DoctorFinding("role", true, $"replica of {primary}, its link to it down{(info.Text("master_sync_in_progress") == "1" ? " (a full resync is running)" : string.Empty)}",
                        "it serves stale data and a failover cannot choose it: check the primary, the network and the primary's replication backlog (repl-backlog-size)"));
                break;
            default:
                break;
        }
    }

    private static void Memory(Figures info, Dictionary<string, string> config, List<DoctorFinding> found)
    {
        if (info.Number("used_memory", MaxBytes) is not { } used)
        {
            return;
        }

        var rss = info.Number("used_memory_rss", MaxBytes);
        var max = (config.TryGetValue("maxmemory", out var configured) ? info.Believed(configured, MaxBytes, "CONFIG GET maxmemory") : info.Number("maxmemory", MaxBytes)) ?? 0;
        var evicted = info.Number("evicted_keys", MaxCount) ?? 0;
        var text = $"{Size(used)} of data, {(rss is { } r ? Size(r) : "?")} resident, maxmemory {(max > 0 ? Size(max) : "none")}, {evicted.ToString("N0", CultureInfo.InvariantCulture)} keys evicted";
        found.Add(max > 0 && used >= max * 0.9
            ? new DoctorFinding("memory", true, text + $": {used * 100 / max}% of maxmemory",
                "at maxmemory the server evicts (or refuses writes, with noeviction) on every write: raise maxmemory, add memory, or expire more")
            : new DoctorFinding("memory", false, text, null));
    }

    private static void Fork(Figures info, List<DoctorFinding> found)
    {
        if (info.Number("latest_fork_usec", MaxForkMicros) is not { } usec || info.Number("used_memory_rss", MaxBytes) is not { } rss)
        {
            return;
        }

        if (usec <= 0)
        {
            found.Add(new DoctorFinding("fork", false, $"no fork since the server started: what one costs at {Size(rss)} resident is not known yet", null));
            return;
        }

        // The latest fork's cost over today's memory (when it forked is not known to a one-shot read), by the judgement the
        // server poller's projection makes (ForkCost): at today's memory, the next one costs what the latest did.
        if (ForkCost.SecondsPerGigabyte(usec, rss) is not { } perGigabyte)
        {
            return;
        }

        var projected = ForkCost.ProjectedSeconds(perGigabyte, rss);
        var text = string.Create(CultureInfo.InvariantCulture,
            $"the latest fork blocked the server {usec / 1000.0:F1} ms ({perGigabyte * 1000:F1} ms per GB resident); at {Size(rss)} the next one will block it about {projected * 1000:F0} ms");
        found.Add(projected >= SlowForkSeconds
            ? new DoctorFinding("fork", true, text, "every BGSAVE, AOF rewrite and full resync pauses the server this long: persist on a replica, schedule saves for a quiet hour, turn transparent huge pages off, or shard smaller")
            : new DoctorFinding("fork", false, text, null));
    }

    private static void Persistence(Figures info, Dictionary<string, string> config, List<DoctorFinding> found)
    {
        var rss = info.Number("used_memory_rss", MaxBytes) ?? 0;
        var save = config.GetValueOrDefault("save");
        var aof = config.GetValueOrDefault("appendonly") ?? (info.Text("aof_enabled") == "1" ? "yes" : null);
        if (aof == "yes" && config.GetValueOrDefault("appendfsync") == "always")
        {
            found.Add(new DoctorFinding("persistence", true, "appendfsync always: every write waits for the disk to confirm it",
                "a slow or busy disk then stalls every client: appendfsync everysec loses at most a second of writes"));
        }

        if (info.Number("aof_delayed_fsync", MaxCount) is > 0 and var delayed)
        {
            found.Add(new DoctorFinding("persistence", true, $"the disk fell behind the AOF {Count(delayed, "time")} (aof_delayed_fsync): the server blocked on its writes",
                "a faster disk, no-appendfsync-on-rewrite yes, or the AOF on a replica only"));
        }

        if (info.Text("rdb_last_bgsave_status") == "err")
        {
            found.Add(new DoctorFinding("persistence", true, "the last BGSAVE failed (rdb_last_bgsave_status:err)",
                "read the server's log: a full disk or a fork refused for memory (vm.overcommit_memory=1); with stop-writes-on-bgsave-error the server refuses writes"));
        }

        if (!string.IsNullOrWhiteSpace(save))
        {
            found.Add(rss >= LargeDatasetBytes
                ? new DoctorFinding("persistence", true, $"save points \"{Shown(save)}\" fork a {Size(rss)} process whenever one fires, in the middle of traffic",
                    "persist on a replica instead, or BGSAVE at a quiet hour from a scheduler and set save \"\"")
                : new DoctorFinding("persistence", false, $"save points \"{Shown(save)}\"; AOF {Shown(aof)}", null));
        }
        else if (save is not null)
        {
            found.Add(new DoctorFinding("persistence", false, $"no save points; AOF {Shown(aof)}", null));
        }
    }

    private static void SlowCommands(List<SlowlogEntry> slowlog, Dictionary<string, string> config, List<DoctorFinding> found)
    {
        if (slowlog.Count == 0)
        {
            var threshold = config.GetValueOrDefault("slowlog-log-slower-than");
            found.Add(new DoctorFinding("slow-log", false, $"the slow log is empty{(threshold is null ? string.Empty : $" (slowlog-log-slower-than {threshold} µs)")}", null));
            return;
        }

        foreach (var group in slowlog.GroupBy(e => (e.Command, e.ClientName)).OrderByDescending(g => g.Max(e => e.Duration)).Take(MaxListed))
        {
            var slowest = group.MaxBy(e => e.Duration);
            var who = slowest.ClientAddress is null && slowest.ClientName is null ? string.Empty
                : $" from {slowest.ClientAddress ?? "an unknown address"} ({slowest.ClientName ?? "no client name"})";
            var text = string.Create(CultureInfo.InvariantCulture,
                $"{(slowest.Argument is { } argument ? $"{slowest.Command} {argument}" : slowest.Command)}{who}: {Count(group.Count(), "time")}, slowest {slowest.Duration.TotalMilliseconds:N0} ms, {group.Sum(e => e.Duration.TotalMilliseconds):N0} ms in all");
            found.Add(slowest.Duration.TotalMilliseconds >= SlowCommandMs
                ? new DoctorFinding("slow-log", true, text, $"the server answered no one meanwhile: {Remedy(slowest.Command)}")
                : new DoctorFinding("slow-log", false, text, null));
        }
    }

    private static string Remedy(string command) => command switch
    {
        "KEYS" => "replace KEYS with SCAN, and ask the client that sent it",
        "DEL" => "UNLINK frees a large value in the background",
        "EVAL" or "EVALSHA" or "FCALL" => "a script blocks the server for as long as it runs: make it shorter, or do the work in the client",
        "GET" or "SET" or "HGET" or "GETSET" or "DUMP" or "RESTORE" => "a huge value: split it, or read it in ranges",
        _ => "read big collections in ranges (SCAN, HSCAN, LRANGE pages), and ask the client that sent it",
    };

    private static void LatencyEvents(List<(string Event, long LatestMs, long MaxMs)> latency, List<DoctorFinding> found)
    {
        foreach (var (name, latest, max) in latency.OrderByDescending(e => e.MaxMs).Take(MaxListed))
        {
            var text = $"latency event {Shown(name)}: latest {latest} ms, worst {max} ms";
            found.Add(max >= SlowCommandMs
                ? new DoctorFinding("latency", true, text, $"LATENCY DOCTOR on the server explains {name}; LATENCY RESET once it is dealt with")
                : new DoctorFinding("latency", false, text, null));
        }
    }

    private static void Clients(List<(string Address, string? Name, long OutputBytes, string? Command)> clients, List<DoctorFinding> found)
    {
        var large = clients.Where(c => c.OutputBytes >= LargeOutputBytes).OrderByDescending(c => c.OutputBytes).ToList();
        if (large.Count == 0)
        {
            found.Add(new DoctorFinding("clients", false, "no client has 1 MB or more of replies waiting to be read", null));
            return;
        }

        foreach (var (address, name, bytes, command) in large.Take(MaxListed))
        {
            found.Add(new DoctorFinding("clients", true,
                $"{address} ({name ?? "no client name"}) has {Size(bytes)} of replies waiting to be read{(command is null ? string.Empty : $" (its last command {command})")}",
                "it reads huge replies: find the value (MEMORY USAGE, redis-cli --bigkeys) and read it in ranges; client-output-buffer-limit bounds what it may hold"));
        }
    }

    private static string Count(long count, string noun) => string.Create(CultureInfo.InvariantCulture, $"{count:N0} {noun}{(count == 1 ? string.Empty : "s")}");

    private static string Size(double bytes) => bytes switch
    {
        >= 1e9 => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1e9:F1} GB"),
        >= 1e6 => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1e6:F1} MB"),
        >= 1e3 => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1e3:F1} kB"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{bytes:F0} bytes"),
    };
}
