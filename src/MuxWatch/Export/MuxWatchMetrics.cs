using MuxWatch.Model;
using Prometheus;

namespace MuxWatch.Export;

/// <summary>
/// Every metric family MuxWatch exports, in one place, created in the registry the host chose
/// (prometheus-net's default registry unless <c>UseMetricsRegistry</c> gave another). The names are
/// the contract of docs/metrics.md, which the alert rules and dashboards use.
/// </summary>
/// <remarks>
/// Label values are bounded: causes, sources, pools, modes, events and failure types are fixed
/// vocabularies; multiplexer names are the registered ones; endpoints of posted or caught messages
/// pass through <see cref="BoundedLabelValues"/>. Never a key, a command argument or a message.
/// </remarks>
public sealed partial class MuxWatchMetrics
{
    /// <summary>
    /// At most this many distinct multiplexer/endpoint label pairs for timeouts that came from outside the
    /// process (posted); a pair unused for <see cref="PostedEndpointIdle"/> gives its place to a new one.
    /// Timeouts of MuxWatch's own probes and of the app's own calls have a budget of their own
    /// (<see cref="MaxOwnTimeoutEndpoints"/>): posts can never push a watched endpoint into <c>other</c>.
    /// </summary>
    public const int MaxTimeoutEndpoints = 200;

    /// <summary>At most this many multiplexer/endpoint pairs for timeouts seen in-process (the probe's, the app's own).</summary>
    public const int MaxOwnTimeoutEndpoints = 2000;

    /// <summary>How long a posted endpoint's label is kept unused before its place can go to another.</summary>
    public static readonly TimeSpan PostedEndpointIdle = TimeSpan.FromHours(1);

    /// <summary>The multiplexer label of a timeout that no registered multiplexer claims (posted, or an unregistered one).</summary>
    public const string UnknownMultiplexer = "unknown";

    private static readonly string[] MultiplexerEndpoint = ["multiplexer", "endpoint"];

    private readonly BoundedLabelValues _ownTimeoutEndpoints = new(MaxOwnTimeoutEndpoints);
    private readonly AgingLabelValues _postedTimeoutEndpoints = new(MaxTimeoutEndpoints, PostedEndpointIdle);

    /// <summary>Creates the families in <paramref name="registry"/>.</summary>
    public MuxWatchMetrics(CollectorRegistry registry)
    {
        ArgumentNullException.ThrowIfNull(registry);
        Registry = registry;
        var factory = Metrics.WithCustomRegistry(registry);

        Timeouts = factory.CreateCounter("muxwatch_timeouts_total",
            "Redis timeouts and connection errors seen, by primary cause and by how they reached MuxWatch.",
            ["multiplexer", "endpoint", "cause", "source"]);
        LastTimeoutSentAwaitingResponse = factory.CreateGauge("muxwatch_last_timeout_sent_awaiting_response",
            "qs of the latest timeout: from the live counters when caught in-process on a registered multiplexer, else from its message.", MultiplexerEndpoint);
        LastTimeoutPendingUnsent = factory.CreateGauge("muxwatch_last_timeout_pending_unsent",
            "qu of the latest timeout (live counters when available, else its message).", MultiplexerEndpoint);
        LastTimeoutInboundBytes = factory.CreateGauge("muxwatch_last_timeout_inbound_bytes",
            "in (bytes received, not yet read) of the latest timeout's message.", MultiplexerEndpoint);
        LastTimeoutBusyWorkerThreads = factory.CreateGauge("muxwatch_last_timeout_busy_worker_threads",
            "Busy worker threads when the latest timeout was raised (its WORKER figure, or MuxWatch's sample at the catch).", MultiplexerEndpoint);
        LastTimeoutTimestamp = factory.CreateGauge("muxwatch_last_timeout_timestamp_seconds",
            "When the latest timeout was raised (unix seconds).", MultiplexerEndpoint);

        Connected = factory.CreateGauge("muxwatch_connected",
            "1 when the multiplexer's interactive connection to the endpoint is up, else 0.", MultiplexerEndpoint);
        SentAwaitingResponse = factory.CreateGauge("muxwatch_sent_awaiting_response",
            "Commands written to the endpoint and awaiting a reply (qs), from IServer.GetCounters().", MultiplexerEndpoint);
        PendingUnsent = factory.CreateGauge("muxwatch_pending_unsent",
            "Commands queued and not yet written (qu). Always 0 on clients before 2.13 (measured).", MultiplexerEndpoint);
        Operations = factory.CreateCounter("muxwatch_operations_total",
            "Operations the multiplexer sent to the endpoint (interactive connection).", MultiplexerEndpoint);
        Reconnects = factory.CreateCounter("muxwatch_reconnects_total",
            "Interactive sockets created after the first: one per reconnect.", MultiplexerEndpoint);
        Subscriptions = factory.CreateGauge("muxwatch_subscriptions",
            "Active subscriptions on the endpoint's subscription connection (includes the client's own channels).", MultiplexerEndpoint);
        Ping = factory.CreateHistogram("muxwatch_ping_seconds",
            "PING round trips through the watched multiplexer.", MultiplexerEndpoint,
            // Ten buckets, not seventeen: this histogram is repeated per endpoint, and its buckets were half of
            // a 500-endpoint scrape (probe-scaling). Enough to tell a LAN round trip (< 1 ms) from queueing
            // (ms) from a stall (s).
            new HistogramConfiguration { Buckets = PingBuckets });
        PingFailures = factory.CreateCounter("muxwatch_ping_failures_total",
            "PINGs that failed, by reason (timeout, connection, disposed, error).", ["multiplexer", "endpoint", "reason"]);
        LastProbeSuccess = factory.CreateGauge("muxwatch_last_probe_success_timestamp_seconds",
            "When the endpoint was last probed successfully: connected, and PING answered when PING is on (unix seconds).", MultiplexerEndpoint);
        HeartbeatAge = factory.CreateGauge("muxwatch_heartbeat_age_seconds",
            "Seconds since the multiplexer's last heartbeat, from GetStatus().", ["multiplexer"]);
        ClientTimeouts = factory.CreateCounter("muxwatch_client_timeouts_total",
            "Timeouts the client itself counted, by mode (sync, async, fire-and-forget), from GetStatus().", ["multiplexer", "mode"]);
        EndpointsOverBudget = factory.CreateGauge("muxwatch_endpoints_over_budget",
            "Endpoints of the multiplexer beyond MuxWatch:MaxEndpointsPerMultiplexer: known to the client, neither probed nor polled.", ["multiplexer"]);
        ConnectionEvents = factory.CreateCounter("muxwatch_connection_events_total",
            "Multiplexer events: connection-failed, connection-restored, error-message, internal-error, server-maintenance. Counted, never ordered (they arrive out of order).",
            ["multiplexer", "endpoint", "event", "failure_type"]);

        (ThreadPoolBusy, ThreadPoolMin, ThreadPoolMax, ThreadPoolThreads, ThreadPoolQueueLength, ThreadPoolCompleted) = CreateThreadPoolFamilies(factory);
        ThreadPoolAdjustments = CreateAdjustmentFamily(factory);
        ThreadPoolStackCaptures = CreateStackCaptureFamily(factory);

        ProbeCycle = factory.CreateHistogram("muxwatch_probe_cycle_seconds",
            "How long one probe cycle took (sampling only: PINGs complete on their own).", [],
            new HistogramConfiguration { Buckets = ProbeCycleBuckets });
        ProbeFailures = factory.CreateCounter("muxwatch_probe_failures_total",
            "Probe work that failed, by probe and reason; the loop goes on.", ["probe", "reason"]);
        CaptureDropped = factory.CreateCounter("muxwatch_capture_dropped_total",
            "Caught exceptions dropped because the capture queue was full.");
        ErrorReplies = factory.CreateCounter("muxwatch_error_replies_total",
            "Error replies the app's Redis commands failed with (RedisServerException, caught like its timeouts), by error code: "
            + "CLUSTERDOWN, TRYAGAIN, MASTERDOWN, READONLY, LOADING, BUSY, OOM, MISCONF, NOREPLICAS, NOAUTH, WRONGPASS, NOPERM, or other.", ["error"]);
        ErrorReplyCounters = [.. Model.ErrorReplies.Codes.Select(code => ErrorReplies.WithLabels(code))]; // exported at 0 from the start
        CorrelationPending = factory.CreateGauge("muxwatch_correlation_pending",
            "Timeouts waiting for their endpoint's next poll before they are counted under their final cause.");

        (ServerBgsaveInProgress, ServerAofRewriteInProgress, ServerModuleForkInProgress, ServerLoading, ServerLatestForkSeconds,
            ServerForks, ServerRdbLastBgsaveOk, ServerAofLastRewriteOk, ServerRdbCurrentBgsaveSeconds, ServerCowSizeBytes,
            ServerLatencyMonitorEnabled, ServerLatencySpikeSeconds, ServerSlowlogEntries, ServerSlowestRecentCommandSeconds,
            ServerRestarts, ServerPollFailures, ServerCommandRefused, ServerLastPollSuccess, ServerClockOffsetSeconds) = CreateServerFamilies(factory);

        var pubSub = CreatePubSubFamilies(factory);
        var replication = CreateReplicationFamilies(factory);
        var forks = CreateForkFamilies(factory);
        Families =
        [
            Timeouts, LastTimeoutSentAwaitingResponse, LastTimeoutPendingUnsent, LastTimeoutInboundBytes, LastTimeoutBusyWorkerThreads,
            LastTimeoutTimestamp, Connected, SentAwaitingResponse, PendingUnsent, Operations, Reconnects, Subscriptions, Ping, PingFailures,
            LastProbeSuccess, HeartbeatAge, ClientTimeouts, EndpointsOverBudget, ConnectionEvents, ThreadPoolBusy, ThreadPoolMin, ThreadPoolMax,
            ThreadPoolThreads, ThreadPoolQueueLength, ThreadPoolCompleted, ThreadPoolAdjustments, ThreadPoolStackCaptures, ProbeCycle, ProbeFailures, CaptureDropped, ErrorReplies, CorrelationPending,
            ServerBgsaveInProgress, ServerAofRewriteInProgress, ServerModuleForkInProgress, ServerLoading, ServerLatestForkSeconds,
            ServerForks, ServerRdbLastBgsaveOk, ServerAofLastRewriteOk, ServerRdbCurrentBgsaveSeconds, ServerCowSizeBytes,
            ServerLatencyMonitorEnabled, ServerLatencySpikeSeconds, ServerSlowlogEntries, ServerSlowestRecentCommandSeconds,
            ServerRestarts, ServerPollFailures, ServerCommandRefused, ServerLastPollSuccess, ServerClockOffsetSeconds,
            .. forks,
            .. replication,
            .. pubSub,
        ];
    }

    /// <summary>The PING histogram's buckets, 0.5 ms to 10 s: a LAN round trip, queueing, a stall.</summary>
    internal static double[] PingBuckets { get; } = [0.0005, 0.001, 0.0025, 0.005, 0.025, 0.1, 0.5, 2.5, 10];

    /// <summary>The probe-cycle histogram's buckets, 0.1 ms to 2.5 s.</summary>
    internal static double[] ProbeCycleBuckets { get; } = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

    /// <summary>Every family, in the order /metrics lists them: what a <see cref="MuxWatchMeter"/> publishes.</summary>
    internal IReadOnlyList<Collector> Families { get; }

    /// <summary>Taken while series are removed, and while a <see cref="MuxWatchMeter"/> reads them: a read never brings a removed series back.</summary>
    internal Lock SeriesGate { get; } = new();

    /// <summary>The meter that publishes these families too, if any.</summary>
    private MuxWatchMeter? _meter;

    internal void AttachMeter(MuxWatchMeter meter) => _meter = meter;

    /// <summary>Records one PING round trip of <paramref name="endpoint"/> into its histogram <paramref name="series"/>, and into the meter when one publishes.</summary>
    public void ObservePing(Histogram.Child series, string multiplexer, string endpoint, double seconds)
    {
        ArgumentNullException.ThrowIfNull(series);
        series.Observe(seconds);
        _meter?.Record(Ping, [multiplexer, endpoint], seconds);
    }

    /// <summary>Records how long one probe cycle took.</summary>
    internal void ObserveProbeCycle(double seconds)
    {
        ProbeCycle.Observe(seconds);
        _meter?.Record(ProbeCycle, [], seconds);
    }

    /// <summary>The bucket boundaries of one of MuxWatch's histograms.</summary>
    internal static double[] BucketsOf(Histogram family) =>
        family.Name switch
        {
            "muxwatch_ping_seconds" => PingBuckets,
            "muxwatch_probe_cycle_seconds" => ProbeCycleBuckets,
            "muxwatch_pubsub_delivery_seconds" => PubSubDeliveryBuckets,
            _ => throw new ArgumentException($"{family.Name} is not one of MuxWatch's histograms", nameof(family)),
        };

    /// <summary>The registry the families live in.</summary>
    public CollectorRegistry Registry { get; }

    internal Counter Timeouts { get; }

    internal Gauge LastTimeoutSentAwaitingResponse { get; }

    internal Gauge LastTimeoutPendingUnsent { get; }

    internal Gauge LastTimeoutInboundBytes { get; }

    internal Gauge LastTimeoutBusyWorkerThreads { get; }

    internal Gauge LastTimeoutTimestamp { get; }

    /// <summary><c>muxwatch_connected</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Gauge Connected { get; }

    /// <summary><c>muxwatch_sent_awaiting_response</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Gauge SentAwaitingResponse { get; }

    /// <summary><c>muxwatch_pending_unsent</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Gauge PendingUnsent { get; }

    /// <summary><c>muxwatch_operations_total</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Counter Operations { get; }

    /// <summary><c>muxwatch_reconnects_total</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Counter Reconnects { get; }

    /// <summary><c>muxwatch_subscriptions</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Gauge Subscriptions { get; }

    /// <summary><c>muxwatch_ping_seconds</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Histogram Ping { get; }

    /// <summary><c>muxwatch_ping_failures_total</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Counter PingFailures { get; }

    /// <summary><c>muxwatch_last_probe_success_timestamp_seconds</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Gauge LastProbeSuccess { get; }

    /// <summary><c>muxwatch_heartbeat_age_seconds</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Gauge HeartbeatAge { get; }

    /// <summary><c>muxwatch_client_timeouts_total</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Counter ClientTimeouts { get; }

    /// <summary><c>muxwatch_connection_events_total</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Counter ConnectionEvents { get; }

    /// <summary><c>muxwatch_endpoints_over_budget</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Gauge EndpointsOverBudget { get; }

    internal Histogram ProbeCycle { get; }

    /// <summary><c>muxwatch_probe_failures_total</c> (labels and meaning: docs/metrics.md), fed by the multiplexer probe.</summary>
    public Counter ProbeFailures { get; }

    internal Counter CaptureDropped { get; }

    /// <summary><c>muxwatch_error_replies_total</c>, by error code.</summary>
    public Counter ErrorReplies { get; }

    /// <summary>Its series, in the order of <see cref="Model.ErrorReplies.Codes"/>.</summary>
    internal Counter.Child[] ErrorReplyCounters { get; }

    internal Gauge CorrelationPending { get; }

    /// <summary>
    /// Exports at 0 the series of one watched endpoint whose label values are known before anything
    /// happens: its timeouts by every cause from each of <paramref name="sources"/>, and the connection
    /// events whose failure type is fixed. Prometheus' <c>increase()</c> and <c>rate()</c> see a series'
    /// first increment only when the series existed before it (its own guidance on missing series).
    /// </summary>
    /// <remarks>
    /// <c>connection-failed</c> is left to appear with its first failure: its failure type is known only
    /// then, and a series for every type the client has would add a dozen per endpoint to a 500-endpoint
    /// sidecar's scrape for one event.
    /// </remarks>
    public void InitializeEndpoint(string multiplexer, string endpoint, string eventEndpoint, IReadOnlyList<string> sources)
    {
        var timeoutEndpoint = _ownTimeoutEndpoints.Admit(multiplexer + "\n" + endpoint) == BoundedLabelValues.Other ? BoundedLabelValues.Other : endpoint;
        foreach (var cause in Enum.GetValues<TimeoutCause>())
        {
            foreach (var source in sources)
            {
                Timeouts.WithLabels(multiplexer, timeoutEndpoint, cause.ToName(), source).Inc(0);
            }
        }

        foreach (var (name, failureType) in KnownEvents)
        {
            ConnectionEvents.WithLabels(multiplexer, eventEndpoint, name, failureType).Inc(0);
        }
    }

    /// <summary>The connection events whose labels are known in advance (the client reports a restore with failure type <c>None</c>, measured).</summary>
    private static readonly (string Name, string FailureType)[] KnownEvents = [("connection-restored", "None"), ("error-message", "none"), ("internal-error", "none")];

    /// <summary>Removes every series of one multiplexer (it was disposed or unregistered).</summary>
    public void RemoveMultiplexer(string multiplexer)
    {
        lock (SeriesGate)
        {
            RemoveMultiplexerUngated(multiplexer);
        }
    }

    /// <summary>
    /// Removes one endpoint's series of <paramref name="multiplexer"/> (a node that left its cluster); its
    /// timeouts stay counted, only its counters still at 0 go.
    /// </summary>
    public void RemoveEndpoint(string multiplexer, string endpoint)
    {
        lock (SeriesGate)
        {
            RemoveSeriesWhere(l => l.Length > 1 && l[0] == multiplexer && l[1] == endpoint);
        }
    }

    private void RemoveMultiplexerUngated(string multiplexer) => RemoveSeriesWhere(l => l.Length > 0 && l[0] == multiplexer);

    private void RemoveSeriesWhere(Func<string[], bool> matches)
    {
        // Its timeouts stay counted; only the series initialized at 0 and never moved go with it.
        foreach (var labels in Timeouts.GetAllLabelValues().Where(matches).ToList())
        {
            if (Timeouts.WithLabels(labels).Value == 0)
            {
                Timeouts.RemoveLabelled(labels);
            }
        }

        foreach (var collector in (Collector[])[Connected, SentAwaitingResponse, PendingUnsent, Operations, Reconnects, Subscriptions,
                     Ping, PingFailures, LastProbeSuccess, HeartbeatAge, ClientTimeouts, ConnectionEvents, EndpointsOverBudget,
                     PubSubDelivery, PubSubLag, PubSubLastDeliveryAge, PubSubUndelivered, PubSubLost, PubSubSubscribed,
                     SubscriptionSentAwaitingResponse, SubscriptionPendingUnsent, SubscriptionOperations])
        {
            RemoveWhere(collector, matches);
        }
    }

    /// <summary>Removes the series whose first label is <paramref name="first"/>.</summary>
    private static void RemoveWhere(Collector collector, string first) => RemoveWhere(collector, l => l.Length > 0 && l[0] == first);

    private static void RemoveWhere(Collector collector, Func<string[], bool> matches)
    {
        switch (collector)
        {
            case Gauge gauge:
                foreach (var labels in gauge.GetAllLabelValues().Where(matches).ToList())
                {
                    gauge.RemoveLabelled(labels);
                }

                break;
            case Counter counter:
                foreach (var labels in counter.GetAllLabelValues().Where(matches).ToList())
                {
                    counter.RemoveLabelled(labels);
                }

                break;
            case Histogram histogram:
                foreach (var labels in histogram.GetAllLabelValues().Where(matches).ToList())
                {
                    histogram.RemoveLabelled(labels);
                }

                break;
            default:
                break;
        }
    }
}
