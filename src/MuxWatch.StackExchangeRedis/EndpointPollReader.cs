using System.Net;
using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Reading;
using MuxWatch.State;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// What one poll of an endpoint reads, with the client's typed calls (<c>INFO</c>; <c>LATENCY LATEST</c>; <c>SLOWLOG GET</c>;
/// <c>LATENCY HISTORY fork</c> when a new fork shows; on a cluster node <c>CLUSTER INFO</c>, and <c>CLUSTER NODES</c> when its node
/// count changes; once a minute <c>CONFIG GET latency-monitor-threshold</c> and <c>TIME</c> (<c>TIME</c> also at the first polls and
/// while a reading is less precise than the best); <c>MEMORY USAGE</c> of a key the
/// diagnosis asks about), and what it keeps from one poll to the next to ask less (the seldom figures, the cluster's node count,
/// the newest fork asked about) or to back off (an oversized reply).
/// </summary>
/// <remarks>
/// The commands are sent one at a time within the one poll timeout (<see cref="PollCommands"/>). A command the endpoint refuses
/// (an ACL, a renamed command) is reported and the others still count; a timeout or a lost connection fails the poll as a
/// whole. One poll in flight at a time reads and writes the state (<see cref="EndpointPoller"/> sees to it).
/// </remarks>
internal sealed class EndpointPollReader(ServerTimeline timeline, IServerPollRequests requests, TimeProvider time, SlowlogSenders? senders = null)
{
    /// <summary>Slow-log entries read per poll: what the core's bookkeeping takes from one (a test holds them equal); new ones stay counted beyond it (by id).</summary>
    internal const int SlowlogBatch = 64;

    private const int MaxKeptErrorChars = 300;

    /// <summary>The first back-off after an oversized reply; it doubles while replies stay oversized.</summary>
    internal static readonly TimeSpan FirstBackoff = TimeSpan.FromSeconds(30);

    /// <summary>The longest back-off: a server that always answers megabytes is still polled every five minutes.</summary>
    internal static readonly TimeSpan LongestBackoff = TimeSpan.FromMinutes(5);

    /// <summary>How often the seldom-changing figures are read: the latency threshold (CONFIG GET) and the server's clock (TIME).</summary>
    internal static readonly TimeSpan SeldomInterval = TimeSpan.FromMinutes(1);

    /// <summary>How long a reading of the server's clock is kept against a less precise one: then any new reading replaces it.</summary>
    internal static readonly TimeSpan ClockKeptFor = TimeSpan.FromMinutes(10);

    /// <summary>
    /// How many polls in a row read the clock again after a reading less precise than the best seen here, and after the first
    /// reading (taken while the process starts, when a reply is most likely to be held up).
    /// </summary>
    internal const int ClockRetries = 5;

    private DateTimeOffset _seldomRead = DateTimeOffset.MinValue;
    private long? _threshold;
    private ClockReading? _clock;
    private TimeSpan _sharpestClock = TimeSpan.MaxValue;
    private int _clockRetries = 1;
    private int _clockReadsAtStart = ClockRetries + 1;
    private List<string> _seldomRefused = [];

    /// <summary>The cluster's known-node count when its members were last read, and when.</summary>
    private string? _knownNodes;

    private DateTimeOffset _membersRead = DateTimeOffset.MinValue;

    /// <summary>The newest fork LATENCY HISTORY was read for.</summary>
    private DateTimeOffset? _forkAskedAbout;

    private readonly KeySizeReader.Pace _keySizes = new();

    /// <summary>Zero, or how long polling waits after an oversized reply (doubling while replies stay oversized).</summary>
    public TimeSpan Backoff { get; private set; }

    /// <summary>Reads one poll of <paramref name="endpoint"/>: what it read, or why it failed.</summary>
    public async Task<ServerPollResult> ReadAsync(IConnectionMultiplexer connection, EndPoint endpoint, TimeSpan timeout, bool keySizes, TimeSpan? clientTimeout, CancellationToken stopping)
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

        // One command at a time (PollCommands). Few commands, so few round trips: INFO (its default sections), LATENCY
        // LATEST (while the latency monitor is on) and SLOWLOG GET each poll; the cluster's view on a cluster node; the
        // latency threshold and the server's clock once a minute.
        var dropped = new List<string>();
        using var commands = new PollCommands(started + timeout, time, stopping);
        try
        {
            var info = new Dictionary<string, string>(ServerPollResult.InfoFields.Count, StringComparer.Ordinal);
            var infoRead = false;
            if (await commands.Answer(server.InfoRawAsync(), "info").ConfigureAwait(false) is { } reply)
            {
                infoRead = true;
                ReplyLimits.ParseInfo(reply.Length <= ReplyLimits.MaxInfoChars ? reply : throw new OversizedReplyException("INFO", reply.Length, ReplyLimits.MaxInfoChars), info, ServerPollResult.InfoFields);
            }

            var (clusterInfo, members) = info.TryGetValue("cluster_enabled", out var clusterEnabled) && clusterEnabled == "1"
                ? await ReadClusterAsync(server, commands, started).ConfigureAwait(false) : (null, null);

            if (started - _seldomRead >= SeldomInterval)
            {
                await ReadSeldomAsync(server, commands, started).ConfigureAwait(false);
            }
            else if (_clockRetries > 0)
            {
                await ReadClockAsync(server, commands, started, _seldomRefused).ConfigureAwait(false);
            }

            // LATENCY LATEST only where the latency monitor records (its threshold above 0, or not known): off, as Redis ships,
            // it has nothing new to say, and each command is a round trip that wakes the app's pool (docs/benchmarks.md).
            var latest = _threshold is 0 ? null
                : Bounded(await commands.Answer(server.LatencyLatestAsync(), "latency").ConfigureAwait(false), "LATENCY LATEST", ReplyLimits.MaxLatencyEntries);

            // Event names a hostile server makes megabytes long (measured: 100 of 1 MB each, read whole by the
            // client every poll, took an uncapped sidecar to 3.8 GB): oversized, so polling backs off.
            if (latest?.Sum(entry => (long)(entry.EventName?.Length ?? 0)) is > ReplyLimits.MaxLatencyNameChars and var nameChars)
            {
                throw new OversizedReplyException("LATENCY LATEST", nameChars, ReplyLimits.MaxLatencyNameChars);
            }
            // Read raw, entry by entry (SlowlogReply says why): one absurd entry is dropped, not the whole poll.
            var slowlogReply = await commands.Answer(server.ExecuteAsync("SLOWLOG", "GET", SlowlogBatch), "slowlog").ConfigureAwait(false);
            var entries = slowlogReply is null ? null : SlowlogReply.Read(slowlogReply, SlowlogBatch, dropped,
                senders is null ? null : name => senders.KnownAs(name, timeline.Endpoint), senders is null ? null : name => senders.MultiplexerOf(name, timeline.Endpoint));
            // The key a large-payload diagnosis asked about (MEMORY USAGE), one at most, rate-limited per endpoint.
            KeySize[] sizes = keySizes && _keySizes.Due(time.GetUtcNow()) && requests.TakeKeyToMeasure(timeline.Endpoint) is { } key
                ? [await KeySizeReader.ReadAsync(server, key, commands.Remaining(), time, stopping).ConfigureAwait(false)] : [];
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
                var history = Bounded(await commands.Answer(server.LatencyHistoryAsync("fork"), "latency").ConfigureAwait(false), "LATENCY HISTORY", ReplyLimits.MaxLatencyEntries);
                forkHistory = history?.Select(h => new LatencySample(Utc(h.Timestamp), h.DurationMilliseconds)).ToList();
            }

            Backoff = TimeSpan.Zero;
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
                ClientTimeout = clientTimeout,
                KeySizes = sizes,
                ClockOffset = _clock?.Offset,
                ClockUncertainty = _clock?.Uncertainty,
                Refused = commands.Refused.Concat(_seldomRefused).Distinct().ToList(),
            };
        }
        catch (OversizedReplyException oversized)
        {
            BackOff();
            return Failed(name, started, "oversized", ReplyLimits.Oversized(oversized.Command, oversized.Size, oversized.Limit, Backoff));
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
            BackOff();
            return Failed(name, started, "oversized", string.Create(System.Globalization.CultureInfo.InvariantCulture,
                $"a reply did not fit in the process' memory budget (its GC heap cap) and its connection was dropped; polling backs off for {Backoff.TotalSeconds:0} s"));
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
    }

    /// <summary>
    /// A cluster node's own view of the cluster (<c>CLUSTER INFO</c>), and which nodes it has (<c>CLUSTER NODES</c>, to
    /// follow a node's removal: the client may hold a removed server for ever), read when its count of known nodes changes, while it lists fewer than it counts, and once a minute.
    /// </summary>
    private async Task<(Dictionary<string, string>? Info, List<string>? Members)> ReadClusterAsync(IServer server, PollCommands commands, DateTimeOffset started)
    {
        // A cluster node's own view of the cluster. No typed call reads CLUSTER INFO (ClusterConfiguration is
        // CLUSTER NODES), so it is sent as a command and its text parsed like INFO, within the same bounds.
        Dictionary<string, string>? clusterInfo = null;
        if (await commands.Answer(server.ExecuteAsync("CLUSTER", "INFO"), "cluster").ConfigureAwait(false) is { } clusterReply
            && (string?)clusterReply is { } clusterReplyText)
        {
            // Over RESP3 the reply is a verbatim string, which the client hands over with its "txt:" format marker.
            var clusterText = clusterReplyText.StartsWith("txt:", StringComparison.Ordinal) ? clusterReplyText[4..] : clusterReplyText;
            clusterInfo = ReplyLimits.ParseInfo(clusterText.Length <= ReplyLimits.MaxInfoChars ? clusterText : throw new OversizedReplyException("CLUSTER INFO", clusterText.Length, ReplyLimits.MaxInfoChars), new Dictionary<string, string>(StringComparer.Ordinal));
        }

        List<string>? members = null;
        if (clusterInfo is not null
            && (clusterInfo.GetValueOrDefault("cluster_known_nodes") != _knownNodes || started - _membersRead >= SeldomInterval)
            && await commands.Answer(server.ClusterNodesRawAsync(), "cluster").ConfigureAwait(false) is { } nodesReply)
        {
            var nodesText = nodesReply.StartsWith("txt:", StringComparison.Ordinal) ? nodesReply[4..] : nodesReply;
            members = ReplyLimits.ParseClusterNodes(nodesText.Length <= ReplyLimits.MaxClusterNodesChars ? nodesText : throw new OversizedReplyException("CLUSTER NODES", nodesText.Length, ReplyLimits.MaxClusterNodesChars));
            var known = clusterInfo.GetValueOrDefault("cluster_known_nodes");
            _knownNodes = ReplyLimits.ListsEveryKnownNode(known, members.Count) ? known : null; // a node in its handshake: read again next poll
            _membersRead = started;
        }

        return (clusterInfo, members);
    }

    /// <summary>
    /// The figures that seldom change, once a minute: the latency monitor's threshold (<c>CONFIG GET</c>) and the server's
    /// clock (<c>TIME</c>, against this process's: the offset of the server's times). Their refusals stand until the next read.
    /// </summary>
    private async Task ReadSeldomAsync(IServer server, PollCommands commands, DateTimeOffset started)
    {
        var refused = new List<string>();
        _threshold = await commands.Answer(server.ConfigGetAsync("latency-monitor-threshold"), "config", refused).ConfigureAwait(false) is { } pairs
            && pairs.FirstOrDefault(pair => pair.Key == "latency-monitor-threshold").Value is { } text
            && long.TryParse(text, System.Globalization.CultureInfo.InvariantCulture, out var ms) ? ms : null;
        await ReadClockAsync(server, commands, started, refused).ConfigureAwait(false);
        _seldomRefused = refused;
        _seldomRead = started;
    }

    /// <summary>
    /// The server's clock against this process's (<c>TIME</c>, taken at the middle of its round trip, so within half of it).
    /// </summary>
    /// <remarks>
    /// A reply held up on either side (the first poll of a process still starting, a busy pool) makes a reading off by up to
    /// half its round trip, and every slow command and fork the server logs is placed by it: the first polls each read it, a
    /// reading is kept against a less precise one for <see cref="ClockKeptFor"/>, and one less precise than the best seen here
    /// is taken again at the next polls (<see cref="ClockRetries"/> at most), as NTP keeps the sample with the shortest round trip. How far it may be off
    /// goes with it (<see cref="ServerPollResult.ClockUncertainty"/>), and the events placed by it are widened by that much.
    /// </remarks>
    private async Task ReadClockAsync(IServer server, PollCommands commands, DateTimeOffset started, List<string> refused)
    {
        var timeSent = time.GetUtcNow();
        var clock = await commands.Answer(server.TimeAsync(), "time", refused).ConfigureAwait(false);
        var timeReceived = time.GetUtcNow();
        if (clock is not { } at)
        {
            _clock = null;
            _clockRetries = 0;
            return;
        }

        var reading = new ClockReading(Utc(at) - (timeSent + ((timeReceived - timeSent) / 2)), (timeReceived - timeSent) / 2, started);
        _sharpestClock = reading.Uncertainty < _sharpestClock ? reading.Uncertainty : _sharpestClock;
        if (_clock is not { } kept || reading.Uncertainty <= kept.Uncertainty || started - kept.ReadAt >= ClockKeptFor)
        {
            _clock = reading;
        }

        var imprecise = _clock.Value.Uncertainty > (2 * _sharpestClock) + TimeSpan.FromMilliseconds(1);
        _clockReadsAtStart = Math.Max(0, _clockReadsAtStart - 1);
        _clockRetries = _clockReadsAtStart > 0 ? 1 : !imprecise ? 0 : _clockRetries > 0 ? _clockRetries - 1 : ClockRetries;
    }

    /// <summary>One reading of the server's clock: its offset from this process's, within how much, and when it was read.</summary>
    private readonly record struct ClockReading(TimeSpan Offset, TimeSpan Uncertainty, DateTimeOffset ReadAt);

    private void BackOff() =>
        Backoff = Backoff == TimeSpan.Zero ? FirstBackoff : TimeSpan.FromTicks(Math.Min(Backoff.Ticks * 2, LongestBackoff.Ticks));

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
