using System.ComponentModel;
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
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public sealed partial class MuxWatchMetrics
{
    /// <summary>
    /// At most this many distinct multiplexer/endpoint label pairs for timeouts that came from outside the
    /// process (posted); a pair unused for <see cref="PostedEndpointIdle"/> gives its place to a new one.
    /// Timeouts of MuxWatch's own probes and of the app's own calls have a budget of their own
    /// (<see cref="MaxOwnTimeoutEndpoints"/>): posts can never push a watched endpoint into <c>other</c>.
    /// </summary>
    internal const int MaxTimeoutEndpoints = 200;

    /// <summary>At most this many multiplexer/endpoint pairs for timeouts seen in-process (the probe's, the app's own).</summary>
    internal const int MaxOwnTimeoutEndpoints = 2000;

    /// <summary>How long a posted endpoint's label is kept unused before its place can go to another.</summary>
    internal static readonly TimeSpan PostedEndpointIdle = TimeSpan.FromHours(1);

    /// <summary>The multiplexer label of a timeout that no registered multiplexer claims (posted, or an unregistered one).</summary>
    internal const string UnknownMultiplexer = "unknown";

    private static readonly string[] MultiplexerEndpoint = ["multiplexer", "endpoint"];

    private readonly BoundedLabelValues _ownTimeoutEndpoints = new(MaxOwnTimeoutEndpoints);
    private readonly AgingLabelValues _postedTimeoutEndpoints = new(MaxTimeoutEndpoints, PostedEndpointIdle);

    /// <summary>Creates the families in <paramref name="registry"/>, in the order /metrics lists them.</summary>
    internal MuxWatchMetrics(CollectorRegistry registry)
    {
        ArgumentNullException.ThrowIfNull(registry);
        Registry = registry;
        _factory = Metrics.WithCustomRegistry(registry);
        DeclareTimeoutFamilies();
        DeclareThreadPoolFamilies();
        DeclareProcessFamilies();
        DeclareServerFamilies();
        DeclareForkFamilies();
        DeclareReplicationFamilies();
    }

    /// <summary>
    /// Whose series a family holds, which says what removes them: nothing (the process's own), an endpoint's removal (its
    /// first label is a polled endpoint), or the core's timeout bookkeeping (multiplexer and endpoint pairs).
    /// </summary>
    internal enum SeriesOwner
    {
        /// <summary>The process's own figures: never removed.</summary>
        Process,

        /// <summary>A polled endpoint's (first label <c>endpoint</c>): removed with it (<see cref="RemoveServerEndpoint"/>).</summary>
        PolledEndpoint,

        /// <summary>A multiplexer's and endpoint's timeouts: kept once counted, at 0 removed with their multiplexer or endpoint.</summary>
        Timeouts,

        /// <summary>A probe package's family (<see cref="Publish"/>): the package removes its series.</summary>
        Package,
    }

    private readonly MetricFactory _factory;

    /// <summary>Declares a gauge: created in the registry, published through the meter, removed as its <paramref name="owner"/> says.</summary>
    private Gauge Gauge(SeriesOwner owner, string name, string help, params string[] labels) =>
        Declared(_factory.CreateGauge(name, help, labels), owner);

    /// <summary>Declares a counter, as <see cref="Gauge"/> does.</summary>
    private Counter Counter(SeriesOwner owner, string name, string help, params string[] labels) =>
        Declared(_factory.CreateCounter(name, help, labels), owner);

    /// <summary>Declares a histogram with its <paramref name="buckets"/> (the meter's instrument advises the same), as <see cref="Gauge"/> does.</summary>
    private Histogram Histogram(SeriesOwner owner, string name, string help, double[] buckets, params string[] labels) =>
        Declared(_factory.CreateHistogram(name, help, labels, new HistogramConfiguration { Buckets = buckets }), owner, buckets);

    private T Declared<T>(T family, SeriesOwner owner, double[]? buckets = null)
        where T : Collector
    {
        lock (_families)
        {
            _families.Add((family, owner));
            if (family is Histogram histogram)
            {
                _buckets[histogram] = buckets!;
            }

            _meter?.Publish(family);
        }

        return family;
    }

    /// <summary>The families of the process's probing and capture: how a probe cycle went, what failed, what was dropped.</summary>
    private void DeclareProcessFamilies()
    {
        ProbeCycle = Histogram(SeriesOwner.Process, "muxwatch_probe_cycle_seconds",
            "How long one probe cycle took (sampling only: PINGs complete on their own).", ProbeCycleBuckets);
        ProbeFailures = Counter(SeriesOwner.Process, "muxwatch_probe_failures_total",
            "Probe work that failed, by probe and reason; the loop goes on.", "probe", "reason");
        CaptureDropped = Counter(SeriesOwner.Process, "muxwatch_capture_dropped_total",
            "Caught exceptions dropped because the capture queue was full.");
        ErrorReplies = Counter(SeriesOwner.Process, "muxwatch_error_replies_total",
            "Error replies the app's Redis commands failed with (RedisServerException, caught like its timeouts), by error code: "
            + "CLUSTERDOWN, TRYAGAIN, MASTERDOWN, READONLY, LOADING, BUSY, OOM, MISCONF, NOREPLICAS, NOAUTH, WRONGPASS, NOPERM, or other.", "error");
        ErrorReplyCounters = [.. Model.ErrorReplies.Codes.Select(code => ErrorReplies.WithLabels(code))]; // exported at 0 from the start
        CorrelationPending = Gauge(SeriesOwner.Process, "muxwatch_correlation_pending",
            "Timeouts waiting for their endpoint's next poll before they are counted under their final cause.");
    }

    /// <summary>The probe-cycle histogram's buckets, 0.1 ms to 2.5 s.</summary>
    internal static double[] ProbeCycleBuckets { get; } = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

    private readonly List<(Collector Family, SeriesOwner Owner)> _families = [];
    private readonly Dictionary<Histogram, double[]> _buckets = [];

    /// <summary>Every family, the core's and those a probe package published, in the order /metrics lists them: what a <see cref="MuxWatchMeter"/> publishes.</summary>
    internal IReadOnlyList<Collector> Families
    {
        get
        {
            lock (_families)
            {
                return [.. _families.Select(declared => declared.Family)];
            }
        }
    }

    /// <summary>Taken while series are removed, and while a <see cref="MuxWatchMeter"/> reads them: a read never brings a removed series back.</summary>
    internal Lock SeriesGate { get; } = new();

    /// <summary>The meter that publishes these families too, if any.</summary>
    private MuxWatchMeter? _meter;

    /// <summary>Publishes every family known now through <paramref name="meter"/>, and every one published later as it comes.</summary>
    internal void AttachMeter(MuxWatchMeter meter)
    {
        lock (_families)
        {
            _meter = meter;
            foreach (var (family, _) in _families)
            {
                meter.Publish(family);
            }
        }
    }

    /// <summary>
    /// Publishes a probe package's own family, created in <see cref="Registry"/>, through MuxWatch's meter
    /// too (now or when the host starts it); a histogram's <paramref name="buckets"/> are the ones its
    /// instrument advises, the same as the family's own.
    /// </summary>
    public void Publish(Collector family, double[]? buckets = null)
    {
        ArgumentNullException.ThrowIfNull(family);
        if (family is Histogram histogram)
        {
            ArgumentNullException.ThrowIfNull(buckets);
        }

        Declared(family, SeriesOwner.Package, buckets);
    }

    /// <summary>
    /// Records one observation into a histogram's <paramref name="series"/> of <paramref name="family"/>, and
    /// into the meter when one publishes it (<paramref name="labelValues"/> become its tags).
    /// </summary>
    public void Observe(Histogram family, IHistogram series, ReadOnlySpan<string> labelValues, double value)
    {
        ArgumentNullException.ThrowIfNull(series);
        series.Observe(value);
        _meter?.Record(family, labelValues, value);
    }

    /// <summary>Records how long one probe cycle took.</summary>
    internal void ObserveProbeCycle(double seconds) => Observe(ProbeCycle, ProbeCycle, [], seconds);

    /// <summary>The bucket boundaries a histogram family was published with.</summary>
    internal double[] BucketsOf(Histogram family)
    {
        lock (_families)
        {
            return _buckets.TryGetValue(family, out var buckets)
                ? buckets
                : throw new ArgumentException($"{family.Name} is not one of MuxWatch's histograms", nameof(family));
        }
    }

    /// <summary>The registry the families live in: a probe package creates its own families here.</summary>
    public CollectorRegistry Registry { get; }

    internal Counter Timeouts { get; private set; } = null!;

    internal Gauge LastTimeoutSentAwaitingResponse { get; private set; } = null!;

    internal Gauge LastTimeoutPendingUnsent { get; private set; } = null!;

    internal Gauge LastTimeoutInboundBytes { get; private set; } = null!;

    internal Gauge LastTimeoutBusyWorkerThreads { get; private set; } = null!;

    internal Gauge LastTimeoutTimestamp { get; private set; } = null!;

    internal Histogram ProbeCycle { get; private set; } = null!;

    internal Counter ProbeFailures { get; private set; } = null!;

    /// <summary>Counts one failure of a probe's work, by probe and reason (<c>muxwatch_probe_failures_total</c>); the loop goes on.</summary>
    public void CountProbeFailure(string probe, string reason) => ProbeFailures.WithLabels(probe, reason).Inc();

    internal Counter CaptureDropped { get; private set; } = null!;

    /// <summary><c>muxwatch_error_replies_total</c>, by error code.</summary>
    internal Counter ErrorReplies { get; private set; } = null!;

    /// <summary>Its series, in the order of <see cref="Model.ErrorReplies.Codes"/>.</summary>
    internal Counter.Child[] ErrorReplyCounters { get; private set; } = [];

    internal Gauge CorrelationPending { get; private set; } = null!;

    /// <summary>
    /// Exports at 0 the timeouts of one watched endpoint by every cause from each of
    /// <paramref name="sources"/>: Prometheus' <c>increase()</c> and <c>rate()</c> see a series' first
    /// increment only when the series existed before it (its own guidance on missing series).
    /// </summary>
    public void InitializeTimeouts(string multiplexer, string endpoint, IReadOnlyList<string> sources)
    {
        ArgumentNullException.ThrowIfNull(sources);
        var timeoutEndpoint = _ownTimeoutEndpoints.Admit(multiplexer + "\n" + endpoint) == BoundedLabelValues.Other ? BoundedLabelValues.Other : endpoint;
        foreach (var cause in Enum.GetValues<TimeoutCause>())
        {
            foreach (var source in sources)
            {
                Timeouts.WithLabels(multiplexer, timeoutEndpoint, cause.ToName(), source).Inc(0);
            }
        }
    }

    /// <summary>Removes one multiplexer's timeouts still at 0 (it was disposed or unregistered); those it counted stay.</summary>
    public void RemoveMultiplexer(string multiplexer) => RemoveZeroTimeouts(labels => labels[0] == multiplexer);

    /// <summary>Removes one endpoint's timeouts still at 0 (a node that left its cluster); those it counted stay.</summary>
    public void RemoveEndpoint(string multiplexer, string endpoint) => RemoveZeroTimeouts(labels => labels[0] == multiplexer && labels[1] == endpoint);

    /// <summary>Removes the series of <paramref name="families"/> whose label values <paramref name="matches"/>, under the gate the meter's reads take (a read never brings a removed series back).</summary>
    public void RemoveSeriesWhere(IReadOnlyList<Collector> families, Func<string[], bool> matches)
    {
        ArgumentNullException.ThrowIfNull(families);
        lock (SeriesGate)
        {
            foreach (var family in families)
            {
                RemoveWhere(family, matches);
            }
        }
    }

    private void RemoveZeroTimeouts(Func<string[], bool> matches)
    {
        lock (SeriesGate)
        {
            foreach (var labels in Timeouts.GetAllLabelValues().Where(matches).ToList())
            {
                if (Timeouts.WithLabels(labels).Value == 0)
                {
                    Timeouts.RemoveLabelled(labels);
                }
            }
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
