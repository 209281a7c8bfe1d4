using System.Net;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.Reading;
using MuxWatch.Sources;
using MuxWatch.State;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Polls one endpoint with the client's typed calls (<c>INFO</c>; <c>LATENCY LATEST</c>; <c>SLOWLOG GET</c>; <c>LATENCY HISTORY fork</c>
/// when a new fork shows; on a cluster node <c>CLUSTER INFO</c>, and <c>CLUSTER NODES</c> when its node count changes; once a minute
/// <c>CONFIG GET latency-monitor-threshold</c> and <c>TIME</c>; <c>MEMORY USAGE</c> of a key the diagnosis asks about) and hands what it
/// read to its <see cref="ServerStateTracker"/>.
/// </summary>
/// <remarks>
/// The commands are sent one after another, each once the one before was answered and its size checked (<see cref="ReplyLimits"/>), all
/// within the one poll timeout. A command the endpoint refuses (an ACL, a renamed command) is reported and the others still count; a
/// timeout or a lost connection fails the poll as a whole.
/// </remarks>
internal sealed class EndpointPoller(ServerTimelines timelines, ServerTimeline timeline, MuxWatchMetrics metrics, TimeProvider time, SlowlogSenders? senders = null)
{
    /// <summary>Slow-log entries read per poll: what the core's bookkeeping takes from one (a test holds them equal); new ones stay counted beyond it (by id).</summary>
    internal const int SlowlogBatch = 64;

    private const int MaxKeptErrorChars = 300;

    /// <summary>The busy cadence's floor: while something runs or waits, a poll every second (or every cycle, if slower).</summary>
    internal static readonly TimeSpan BusyInterval = TimeSpan.FromSeconds(1);

    /// <summary>The first back-off after an oversized reply; it doubles while replies stay oversized.</summary>
    internal static readonly TimeSpan FirstBackoff = TimeSpan.FromSeconds(30);

    /// <summary>The longest back-off: a server that always answers megabytes is still polled every five minutes.</summary>
    internal static readonly TimeSpan LongestBackoff = TimeSpan.FromMinutes(5);

    private int _inFlight;
    private readonly Lock _applying = new();
    private bool _retired;
    private DateTimeOffset _lastStart = DateTimeOffset.MinValue;

    /// <summary>Zero, or how long polling waits after an oversized reply (one poll in flight at a time reads and writes it).</summary>
    private TimeSpan _backoff;

    /// <summary>How often the seldom-changing figures are read: the latency threshold (CONFIG GET) and the server's clock (TIME).</summary>
    internal static readonly TimeSpan SeldomInterval = TimeSpan.FromMinutes(1);

    private DateTimeOffset _seldomRead = DateTimeOffset.MinValue;
    private long? _threshold;
    private TimeSpan? _clockOffset;
    private List<string> _seldomRefused = [];

    /// <summary>The cluster's known-node count when its members were last read, and when (one poll in flight at a time reads and writes them).</summary>
    private string? _knownNodes;

    private DateTimeOffset _membersRead = DateTimeOffset.MinValue;

    /// <summary>The newest fork LATENCY HISTORY was read for (one poll in flight at a time reads and writes it).</summary>
    private DateTimeOffset? _forkAskedAbout;

    /// <summary>What the poll under way dropped as not believable (one poll in flight at a time reads and writes it).</summary>
    private List<string> _dropped = [];

    private long _clientTimeoutTicks = -1;
    private readonly KeySizeReader.Pace _keySizes = new();

    /// <summary>The smallest timeout of the multiplexers watching the endpoint, set by the probe each cycle (read by a poll on another thread).</summary>
    public TimeSpan? ClientTimeout
    {
        get => Interlocked.Read(ref _clientTimeoutTicks) is var ticks and >= 0 ? TimeSpan.FromTicks(ticks) : null;
        set => Interlocked.Exchange(ref _clientTimeoutTicks, value?.Ticks ?? -1);
    }

    /// <summary>The endpoint is no longer watched: a poll still in flight is dropped when it ends; once this returns, none writes again.</summary>
    public void Retire()
    {
        lock (_applying)
        {
            _retired = true;
        }
    }

    /// <summary>Starts a poll when one is due (on the <see cref="Cadence"/>, or a whole back-off after an oversized reply) and none is in flight.</summary>
    public void StartIfDue(DateTimeOffset now, IConnectionMultiplexer connection, EndPoint endpoint, MuxWatchOptions settings, TimeSpan phase, CancellationToken stopping)
    {
        // After an oversized reply, a whole back-off from the last start (10% slack for the loop's ticks); else the PINGs' cadence (one wake of the pool).
        var due = _backoff > TimeSpan.Zero
            ? now - _lastStart >= Max(_backoff, settings.ServerPollInterval) * 0.9
            : Cadence.InNewSlot(_lastStart, now, timeline.PollSoon ? Min(settings.ServerPollInterval, Max(settings.ProbeInterval, BusyInterval)) : settings.ServerPollInterval, phase);
        if (!due || Interlocked.CompareExchange(ref _inFlight, 1, 0) != 0)
        {
            return;
        }

        _lastStart = now;
        _ = PollAsync(connection, endpoint, settings.ServerPollTimeout, settings.KeySizes, stopping); // never awaited on the loop
    }

    private async Task PollAsync(IConnectionMultiplexer connection, EndPoint endpoint, TimeSpan timeout, bool keySizes, CancellationToken stopping)
    {
        try
        {
            using (ProbeScope.Enter())
            {
                var result = await ReadAsync(connection, endpoint, timeout, keySizes, stopping).ConfigureAwait(false);
                bool applied;
                lock (_applying)
                {
                    // A poll that ends after its endpoint was dropped would write its series again, for good.
                    applied = !_retired && timelines.Apply(timeline, result);
                }

                if (applied)
                {
                    timelines.RaisePolled(timeline); // the correlator settles what waited for this poll
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
#pragma warning disable CA1031 // a poll is fire-and-forget: a failure here must be counted, never left unobserved
        catch (Exception ex)
#pragma warning restore CA1031
        {
            metrics.CountProbeFailure("server-poll", ex.GetType().Name);
        }
        finally
        {
            Volatile.Write(ref _inFlight, 0);
        }
    }

    private async Task<ServerPollResult> ReadAsync(IConnectionMultiplexer connection, EndPoint endpoint, TimeSpan timeout, bool keySizes, CancellationToken stopping)
    {
        var started = time.GetUtcNow();
        var name = timeline.Endpoint;
        IServer server;
        try
        {
            server = connection.GetServer(endpoint);
        }
        catch (ArgumentException)
        {
            return Failed(name, started, "connection", "the polling connection does not know this endpoint yet");
        }

        if (!server.IsConnected)
        {
            if (server.GetCounters().Interactive.SocketCount == 0)
            {
                // A node learnt of from a cluster's node list is connected only once a command goes there: this PING, never awaited.
                FireAndForget.Observe(server.PingAsync());
            }

            return Failed(name, started, "connection", "the polling connection is not connected");
        }

        // One command at a time, each sent once the one before was answered and measured: a hostile server can make any
        // reply megabytes, and the client buffers every pipelined reply whole, so only one reply is ever in flight per
        // endpoint. Few commands, so few round trips: INFO (its default sections), LATENCY LATEST (while the latency
        // monitor is on) and SLOWLOG GET each poll; the latency threshold and the server's clock once a minute.
        var refused = new List<string>();
        var dropped = _dropped = [];
        var sent = new List<Task>();
        var deadline = started + timeout;
        try
        {
            var info = new Dictionary<string, string>(StringComparer.Ordinal);
            var infoRead = false;
            if (await Answer(Send(sent, server.InfoRawAsync()), "info", refused, deadline, stopping).ConfigureAwait(false) is { } reply)
            {
                infoRead = true;
                ReplyLimits.ParseInfo(reply.Length <= ReplyLimits.MaxInfoChars ? reply : throw new OversizedReplyException("INFO", reply.Length, ReplyLimits.MaxInfoChars), info);
            }

            // A cluster node's own view of the cluster. No typed call reads CLUSTER INFO (ClusterConfiguration is
            // CLUSTER NODES), so it is sent as a command and its text parsed like INFO, within the same bounds.
            Dictionary<string, string>? clusterInfo = null;
            if (info.TryGetValue("cluster_enabled", out var clusterEnabled) && clusterEnabled == "1"
                && await Answer(Send(sent, server.ExecuteAsync("CLUSTER", "INFO")), "cluster", refused, deadline, stopping).ConfigureAwait(false) is { } clusterReply
                && (string?)clusterReply is { } clusterReplyText)
            {
                // Over RESP3 the reply is a verbatim string, which the client hands over with its "txt:" format marker.
                var clusterText = clusterReplyText.StartsWith("txt:", StringComparison.Ordinal) ? clusterReplyText[4..] : clusterReplyText;
                clusterInfo = ReplyLimits.ParseInfo(clusterText.Length <= ReplyLimits.MaxInfoChars ? clusterText : throw new OversizedReplyException("CLUSTER INFO", clusterText.Length, ReplyLimits.MaxInfoChars), new Dictionary<string, string>(StringComparer.Ordinal));
            }

            // Which nodes the cluster has, to follow a node's removal (the client never forgets a server): read when
            // the node's count of known nodes changes, and once a minute.
            List<string>? members = null;
            if (clusterInfo is not null
                && (clusterInfo.GetValueOrDefault("cluster_known_nodes") != _knownNodes || started - _membersRead >= SeldomInterval)
                && await Answer(Send(sent, server.ClusterNodesRawAsync()), "cluster", refused, deadline, stopping).ConfigureAwait(false) is { } nodesReply)
            {
                var nodesText = nodesReply.StartsWith("txt:", StringComparison.Ordinal) ? nodesReply[4..] : nodesReply;
                members = ReplyLimits.ParseClusterNodes(nodesText.Length <= ReplyLimits.MaxClusterNodesChars ? nodesText : throw new OversizedReplyException("CLUSTER NODES", nodesText.Length, ReplyLimits.MaxClusterNodesChars));
                _knownNodes = clusterInfo.GetValueOrDefault("cluster_known_nodes");
                _membersRead = started;
            }

            if (started - _seldomRead >= SeldomInterval)
            {
                var seldomRefused = new List<string>();
                _threshold = await Answer(Send(sent, server.ConfigGetAsync("latency-monitor-threshold")), "config", seldomRefused, deadline, stopping).ConfigureAwait(false) is { } pairs
                    && pairs.FirstOrDefault(pair => pair.Key == "latency-monitor-threshold").Value is { } text
                    && long.TryParse(text, System.Globalization.CultureInfo.InvariantCulture, out var ms) ? ms : null;
                var timeSent = time.GetUtcNow();
                var clock = await Answer(Send(sent, server.TimeAsync()), "time", seldomRefused, deadline, stopping).ConfigureAwait(false);
                var timeReceived = time.GetUtcNow();
                _clockOffset = clock is { } at ? Utc(at) - (timeSent + ((timeReceived - timeSent) / 2)) : null;
                _seldomRefused = seldomRefused;
                _seldomRead = started;
            }

            // LATENCY LATEST only where the latency monitor records (its threshold above 0, or not known): off, as Redis ships,
            // it has nothing new to say, and each command is a round trip that wakes the app's pool (docs/benchmarks.md).
            var latest = _threshold is 0 ? null
                : Bounded(await Answer(Send(sent, server.LatencyLatestAsync()), "latency", refused, deadline, stopping).ConfigureAwait(false), "LATENCY LATEST", ReplyLimits.MaxLatencyEntries);

            // Event names a hostile server makes megabytes long (measured: 100 of 1 MB each, read whole by the
            // client every poll, took an uncapped sidecar to 3.8 GB): oversized, so polling backs off.
            if (latest?.Sum(entry => (long)(entry.EventName?.Length ?? 0)) is > ReplyLimits.MaxLatencyNameChars and var nameChars)
            {
                throw new OversizedReplyException("LATENCY LATEST", nameChars, ReplyLimits.MaxLatencyNameChars);
            }
            // Read raw, entry by entry (SlowlogReply says why): one absurd entry is dropped, not the whole poll.
            var slowlogReply = await Answer(Send(sent, server.ExecuteAsync("SLOWLOG", "GET", SlowlogBatch)), "slowlog", refused, deadline, stopping).ConfigureAwait(false);
            var entries = slowlogReply is null ? null : SlowlogReply.Read(slowlogReply, SlowlogBatch, dropped, senders is null ? null : name => senders.KnownAs(name, timeline.Endpoint));
            // The key a large-payload diagnosis asked about (MEMORY USAGE), one at most, rate-limited per endpoint.
            KeySize[] sizes = keySizes && _keySizes.Due(time.GetUtcNow()) && timeline.TakeWantedKey() is { } key
                ? [await KeySizeReader.ReadAsync(server, key, Remaining(deadline), time, stopping).ConfigureAwait(false)] : [];
            refused.AddRange(_seldomRefused);
            var threshold = _threshold;

            IReadOnlyList<LatencySample>? forkHistory = null;
            // LATENCY HISTORY fork only when LATENCY LATEST shows a fork newer than any asked about before:
            // once per fork, even when the history a server returns does not contain the fork its LATEST named.
            // (An entry is a struct: FirstOrDefault of none would be an empty entry, which is no fork.)
            var fork = latest?.Where(entry => entry.EventName == "fork").Select(entry => (DateTime?)entry.Timestamp).FirstOrDefault();
            if (fork is { } newest && Utc(newest) is var forkAt
                && (timeline.LastForkSample is not { } seen || forkAt > seen) && (_forkAskedAbout is not { } asked || forkAt > asked))
            {
                _forkAskedAbout = forkAt;
                var history = Bounded(await Answer(Send(sent, server.LatencyHistoryAsync("fork")), "latency", refused, deadline, stopping).ConfigureAwait(false), "LATENCY HISTORY", ReplyLimits.MaxLatencyEntries);
                forkHistory = history?.Select(h => new LatencySample(Utc(h.Timestamp), h.DurationMilliseconds)).ToList();
            }

            _backoff = TimeSpan.Zero;
            return new ServerPollResult(name, started, time.GetUtcNow())
            {
                Info = infoRead ? info : null,
                ClusterInfo = clusterInfo,
                ClusterMembers = members,
                LatencyMonitorThresholdMs = threshold,
                LatencyLatest = latest?.Select(l => new LatencySpike(l.EventName, Utc(l.Timestamp), l.DurationMilliseconds, l.MaxDurationMilliseconds)).ToList(),
                ForkHistory = forkHistory,
                Slowlog = entries,
                Dropped = dropped,
                ClientTimeout = ClientTimeout,
                KeySizes = sizes,
                ClockOffset = _clockOffset,
                Refused = refused.Distinct().ToList(),
            };
        }
        catch (OversizedReplyException oversized)
        {
            _backoff = _backoff == TimeSpan.Zero ? FirstBackoff : TimeSpan.FromTicks(Math.Min(_backoff.Ticks * 2, LongestBackoff.Ticks));
            return Failed(name, started, "oversized", ReplyLimits.Oversized(oversized.Command, oversized.Size, oversized.Limit, _backoff));
        }
        catch (Exception ex) when (ex is RedisTimeoutException or TimeoutException)
        {
            return Failed(name, started, "timeout", ex.Message);
        }
        catch (Exception ex) when (OutOfMemoryIn(ex))
        {
            // A reply the client could not read within the process' heap cap (the service sets one: a hostile
            // server's 100 MB reply, read every poll, cost 3.8 GB uncapped): refused as oversized, and polling
            // backs off as it does for a reply measured too big, rather than reading it again every poll.
            _backoff = _backoff == TimeSpan.Zero ? FirstBackoff : TimeSpan.FromTicks(Math.Min(_backoff.Ticks * 2, LongestBackoff.Ticks));
            return Failed(name, started, "oversized", string.Create(System.Globalization.CultureInfo.InvariantCulture,
                $"a reply did not fit in the process' memory budget (its GC heap cap) and its connection was dropped; polling backs off for {_backoff.TotalSeconds:0} s"));
        }
        catch (Exception ex) when (ex is RedisConnectionException or ObjectDisposedException)
        {
            return Failed(name, started, "connection", ex.Message);
        }
#pragma warning disable CA1031 // a poll that fails in any other way is counted and reported; the next one tries again
        catch (Exception ex) when (ex is not OperationCanceledException)
#pragma warning restore CA1031
        {
            return Failed(name, started, "error", $"{ex.GetType().Name}: {ex.Message}");
        }
        finally
        {
            // Nothing left unobserved: a command still pending when the poll gave up fails on its own.
            foreach (var pending in sent)
            {
                FireAndForget.Observe(pending);
            }
        }
    }

    /// <summary>The command's reply; null when the endpoint refused it (noted in <paramref name="refused"/>).</summary>
    private async Task<T?> Answer<T>(Task<T> command, string name, List<string> refused, DateTimeOffset deadline, CancellationToken stopping)
        where T : class?
    {
        try
        {
            return await command.WaitAsync(Remaining(deadline), time, stopping).ConfigureAwait(false);
        }
        catch (RedisServerException ex)
        {
            OversizedError(name, ex);
            refused.Add(name); // NOPERM, an unknown (renamed) command, a command the server disabled
            return null;
        }
        catch (RedisCommandException)
        {
            refused.Add(name); // the client's own refusal (admin mode, a command map that removed it)
            return null;
        }
    }

    private async Task<DateTime?> Answer(Task<DateTime> command, string name, List<string> refused, DateTimeOffset deadline, CancellationToken stopping)
    {
        try
        {
            return await command.WaitAsync(Remaining(deadline), time, stopping).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is RedisServerException or RedisCommandException)
        {
            OversizedError(name, ex);
            refused.Add(name);
            return null;
        }
    }

    /// <summary>Notes a sent command, so that the poll observes it even if it gives up before the answer.</summary>
    private static Task<T> Send<T>(List<Task> sent, Task<T> command)
    {
        sent.Add(command);
        return command;
    }

    /// <summary>What is left of the poll's timeout (the whole poll has one, however many commands it sends).</summary>
    private TimeSpan Remaining(DateTimeOffset deadline)
    {
        var left = deadline - time.GetUtcNow();
        return left > TimeSpan.Zero ? left : throw new TimeoutException("the poll ran out of its time before every command was answered");
    }

    /// <summary>An error reply over <see cref="ReplyLimits.MaxErrorChars"/> is no refusal but a hostile reply.</summary>
    private static void OversizedError(string name, Exception error)
    {
        if (error.Message.Length > ReplyLimits.MaxErrorChars)
        {
            throw new OversizedReplyException(name.ToUpperInvariant() + " (an error)", error.Message.Length, ReplyLimits.MaxErrorChars);
        }
    }

    /// <summary><paramref name="entries"/>, unless there are more than <paramref name="limit"/>.</summary>
    private static T[]? Bounded<T>(T[]? entries, string command, int limit) =>
        entries is { Length: var count } && count > limit ? throw new OversizedReplyException(command, count, limit) : entries;

    private ServerPollResult Failed(string endpoint, DateTimeOffset started, string reason, string message)
    {
        // Only the head is kept: redacting megabytes of a hostile error would cost more than the reply.
        var redacted = SecretRedactor.Redact(message.Length > ReplyLimits.MaxErrorChars ? message[..ReplyLimits.MaxErrorChars] : message);
        return new ServerPollResult(endpoint, started, time.GetUtcNow())
        {
            Error = redacted.Length > MaxKeptErrorChars ? redacted[..MaxKeptErrorChars] : redacted,
            ErrorReason = reason,
        };
    }

    private static TimeSpan Max(TimeSpan a, TimeSpan b) => a > b ? a : b;

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;

    /// <summary>The client converts server times from unix seconds, in UTC.</summary>
    private static DateTimeOffset Utc(DateTime time) => new(DateTime.SpecifyKind(time, DateTimeKind.Utc));

    /// <summary>True when <paramref name="error"/> or what caused it ran out of memory (the client reports its reader's failure wrapped).</summary>
    private static bool OutOfMemoryIn(Exception error)
    {
        for (var ex = error; ex is not null; ex = ex.InnerException)
        {
            if (ex is OutOfMemoryException || ex.Message.Contains("OutOfMemoryException", StringComparison.Ordinal))
            {
                return true;
            }
        }

        return false;
    }
}
