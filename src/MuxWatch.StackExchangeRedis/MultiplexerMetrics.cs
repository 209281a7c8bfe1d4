using MuxWatch.Export;
using Prometheus;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// The families this package feeds (docs/metrics.md, "Multiplexers" and "Pub/sub"): a multiplexer's
/// connections, queues, PINGs, heartbeat, the client's own counts and events, per multiplexer and endpoint.
/// They live beside the core's in the registry the host chose and are published through its meter
/// (<see cref="MuxWatchMetrics.Publish"/>); the core never reads them.
/// </summary>
internal sealed partial class MultiplexerMetrics
{
    private static readonly string[] MultiplexerEndpoint = ["multiplexer", "endpoint"];

    /// <summary>The connection events whose labels are known in advance (the client reports a restore with failure type <c>None</c>, measured).</summary>
    private static readonly (string Name, string FailureType)[] KnownEvents = [("connection-restored", "None"), ("error-message", "none"), ("internal-error", "none")];

    /// <summary>Creates the families in <paramref name="core"/>'s registry and publishes them with the core's.</summary>
    public MultiplexerMetrics(MuxWatchMetrics core)
    {
        ArgumentNullException.ThrowIfNull(core);
        Core = core;
        _factory = Metrics.WithCustomRegistry(core.Registry);
        Connected = Gauge("muxwatch_connected",
            "1 when the multiplexer's interactive connection to the endpoint is up, else 0.", MultiplexerEndpoint);
        SentAwaitingResponse = Gauge("muxwatch_sent_awaiting_response",
            "Commands written to the endpoint and awaiting a reply (qs), from IServer.GetCounters().", MultiplexerEndpoint);
        PendingUnsent = Gauge("muxwatch_pending_unsent",
            "Commands queued and not yet written (qu). Always 0 on clients before 2.13 (measured).", MultiplexerEndpoint);
        Operations = Counter("muxwatch_operations_total",
            "Operations the multiplexer sent to the endpoint (interactive connection).", MultiplexerEndpoint);
        Reconnects = Counter("muxwatch_reconnects_total",
            "Interactive sockets created after the first: one per reconnect.", MultiplexerEndpoint);
        Subscriptions = Gauge("muxwatch_subscriptions",
            "Active subscriptions on the endpoint's subscription connection (includes the client's own channels).", MultiplexerEndpoint);
        // Ten buckets, not seventeen: this histogram is repeated per endpoint, and its buckets were half of a 500-endpoint
        // scrape (probe-scaling). Enough to tell a LAN round trip (< 1 ms) from queueing (ms) from a stall (s).
        Ping = Histogram("muxwatch_ping_seconds", "PING round trips through the watched multiplexer.", PingBuckets, MultiplexerEndpoint);
        PingFailures = Counter("muxwatch_ping_failures_total",
            "PINGs that failed, by reason (timeout, connection, disposed, error).", ["multiplexer", "endpoint", "reason"]);
        LastProbeSuccess = Gauge("muxwatch_last_probe_success_timestamp_seconds",
            "When the endpoint was last probed successfully: connected, and PING answered when PING is on (unix seconds).", MultiplexerEndpoint);
        HeartbeatAge = Gauge("muxwatch_heartbeat_age_seconds",
            "Seconds since the multiplexer's last heartbeat, from GetStatus().", ["multiplexer"]);
        ClientTimeouts = Counter("muxwatch_client_timeouts_total",
            "Timeouts the client itself counted, by mode (sync, async, fire-and-forget), from GetStatus().", ["multiplexer", "mode"]);
        EndpointsOverBudget = Gauge("muxwatch_endpoints_over_budget",
            "Endpoints of the multiplexer beyond MuxWatch:MaxEndpointsPerMultiplexer: known to the client, neither probed nor polled.", ["multiplexer"]);
        ConnectionEvents = Counter("muxwatch_connection_events_total",
            "Multiplexer events: connection-failed, connection-restored, error-message, internal-error, server-maintenance. Counted, never ordered (they arrive out of order).",
            ["multiplexer", "endpoint", "event", "failure_type"]);
        DeclarePubSubFamilies();
    }

    private readonly MetricFactory _factory;
    private readonly List<Collector> _families = [];

    /// <summary>Declares a gauge of this package: created in the core's registry, published through its meter, removed with its multiplexer or endpoint.</summary>
    private Gauge Gauge(string name, string help, params string[] labels) => Declared(_factory.CreateGauge(name, help, labels));

    /// <summary>Declares a counter, as <see cref="Gauge"/> does.</summary>
    private Counter Counter(string name, string help, params string[] labels) => Declared(_factory.CreateCounter(name, help, labels));

    /// <summary>Declares a histogram with its <paramref name="buckets"/>, as <see cref="Gauge"/> does.</summary>
    private Histogram Histogram(string name, string help, double[] buckets, params string[] labels) =>
        Declared(_factory.CreateHistogram(name, help, labels, new HistogramConfiguration { Buckets = buckets }), buckets);

    private T Declared<T>(T family, double[]? buckets = null)
        where T : Collector
    {
        _families.Add(family);
        Core.Publish(family, buckets);
        return family;
    }

    /// <summary>The PING histogram's buckets, 0.5 ms to 10 s: a LAN round trip, queueing, a stall.</summary>
    internal static double[] PingBuckets { get; } = [0.0005, 0.001, 0.0025, 0.005, 0.025, 0.1, 0.5, 2.5, 10];

    /// <summary>The core's families and contract: the registry, the meter, timeouts, probe failures, series removal.</summary>
    public MuxWatchMetrics Core { get; }

    /// <summary>This package's families, in the order they were declared.</summary>
    public IReadOnlyList<Collector> Families => _families;

    public Gauge Connected { get; private set; } = null!;

    public Gauge SentAwaitingResponse { get; private set; } = null!;

    public Gauge PendingUnsent { get; private set; } = null!;

    public Counter Operations { get; private set; } = null!;

    public Counter Reconnects { get; private set; } = null!;

    public Gauge Subscriptions { get; private set; } = null!;

    public Histogram Ping { get; private set; } = null!;

    public Counter PingFailures { get; private set; } = null!;

    public Gauge LastProbeSuccess { get; private set; } = null!;

    public Gauge HeartbeatAge { get; private set; } = null!;

    public Counter ClientTimeouts { get; private set; } = null!;

    public Counter ConnectionEvents { get; private set; } = null!;

    public Gauge EndpointsOverBudget { get; private set; } = null!;

    /// <summary>Records one PING round trip of <paramref name="endpoint"/> into its histogram <paramref name="series"/>, and into the meter when one publishes.</summary>
    public void ObservePing(Histogram.Child series, string multiplexer, string endpoint, double seconds) =>
        Core.Observe(Ping, series, [multiplexer, endpoint], seconds);

    /// <summary>Counts one failure of this package's probe work (the loop goes on).</summary>
    public void CountProbeFailure(string probe, string reason) => Core.CountProbeFailure(probe, reason);

    /// <summary>
    /// Exports at 0 the series of one watched endpoint whose label values are known before anything
    /// happens: its timeouts by every cause from each of <paramref name="sources"/> (the core's), and the
    /// connection events whose failure type is fixed. Prometheus' <c>increase()</c> and <c>rate()</c> see a
    /// series' first increment only when the series existed before it (its own guidance on missing series).
    /// </summary>
    /// <remarks>
    /// <c>connection-failed</c> is left to appear with its first failure: its failure type is known only
    /// then, and a series for every type the client has would add a dozen per endpoint to a 500-endpoint
    /// sidecar's scrape for one event.
    /// </remarks>
    public void InitializeEndpoint(string multiplexer, string endpoint, string eventEndpoint, IReadOnlyList<string> sources) =>
        InitializeEndpoints([(multiplexer, endpoint, eventEndpoint, sources)]);

    /// <summary>
    /// <see cref="InitializeEndpoint"/> for several endpoints seen at once, a family at a time (the timeouts of them all, then
    /// their connection events), so that each family's series lie side by side in memory
    /// (<see cref="EndpointSeries.MakeFamilyByFamily"/> says why).
    /// </summary>
    public void InitializeEndpoints(IReadOnlyList<(string Multiplexer, string Endpoint, string EventEndpoint, IReadOnlyList<string> Sources)> endpoints)
    {
        foreach (var (multiplexer, endpoint, _, sources) in endpoints)
        {
            Core.InitializeTimeouts(multiplexer, endpoint, sources);
        }

        foreach (var (multiplexer, _, eventEndpoint, _) in endpoints)
        {
            foreach (var (name, failureType) in KnownEvents)
            {
                ConnectionEvents.WithLabels(multiplexer, eventEndpoint, name, failureType).Inc(0);
            }
        }
    }

    /// <summary>Removes every series of one multiplexer (it was disposed or unregistered): this package's, and its timeouts still at 0.</summary>
    public void RemoveMultiplexer(string multiplexer)
    {
        Core.RemoveSeriesWhere(Families, labels => labels.Length > 0 && labels[0] == multiplexer);
        Core.RemoveMultiplexer(multiplexer);
    }

    /// <summary>
    /// Removes one endpoint's series of <paramref name="multiplexer"/> (a node that left its cluster); its
    /// timeouts stay counted, only its counters still at 0 go.
    /// </summary>
    public void RemoveEndpoint(string multiplexer, string endpoint)
    {
        Core.RemoveSeriesWhere(Families, labels => labels.Length > 1 && labels[0] == multiplexer && labels[1] == endpoint);
        Core.RemoveEndpoint(multiplexer, endpoint);
    }
}
