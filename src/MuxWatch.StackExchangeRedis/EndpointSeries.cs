
namespace MuxWatch.StackExchangeRedis;

/// <summary>The labelled children of one endpoint's per-cycle series, looked up once: a probe cycle then touches no label dictionary.</summary>
/// <remarks>
/// A multiplexer MuxWatch made itself (<paramref name="owned"/>: a sidecar target) carries only MuxWatch's own commands:
/// its operations and subscriptions count MuxWatch, not an app, and are not exported (docs/metrics.md, "Per endpoint").
/// </remarks>
internal sealed class EndpointSeries(MultiplexerMetrics metrics, string multiplexer, string endpoint, bool owned = false)
{
    public Prometheus.Gauge.Child Connected { get; } = metrics.Connected.WithLabels(multiplexer, endpoint);

    public Prometheus.Gauge.Child SentAwaitingResponse { get; } = metrics.SentAwaitingResponse.WithLabels(multiplexer, endpoint);

    public Prometheus.Gauge.Child PendingUnsent { get; } = metrics.PendingUnsent.WithLabels(multiplexer, endpoint);

    public Prometheus.Counter.Child? Operations { get; } = owned ? null : metrics.Operations.WithLabels(multiplexer, endpoint);

    public Prometheus.Counter.Child Reconnects { get; } = metrics.Reconnects.WithLabels(multiplexer, endpoint);

    public Prometheus.Gauge.Child? Subscriptions { get; } = owned ? null : metrics.Subscriptions.WithLabels(multiplexer, endpoint);

    // These two appear with the first success, not before: a "last success" of 0 (1970) or an empty
    // round-trip histogram would say something about an endpoint that never answered.
    public Prometheus.Histogram.Child Ping => field ??= metrics.Ping.WithLabels(multiplexer, endpoint);

    public Prometheus.Gauge.Child LastProbeSuccess => field ??= metrics.LastProbeSuccess.WithLabels(multiplexer, endpoint);

    /// <summary>One PING round trip: into the histogram, and into the MuxWatch meter when one publishes.</summary>
    public void ObservePing(double seconds) => metrics.ObservePing(Ping, multiplexer, endpoint, seconds);

    /// <summary>
    /// Makes the series the constructor makes at once (not those that wait for a first success) for every one of
    /// <paramref name="endpoints"/>, a family at a time: a scrape visits each family's series in turn, and made so they
    /// lie side by side in memory. Made an endpoint at a time, consecutive series of a family lay an endpoint's worth of
    /// objects apart, and prometheus-net alone rendered the same 27,078 series 1.08-1.26 times slower (docs/benchmarks.md,
    /// "Where the series lie in memory"). The constructors that follow find them made.
    /// </summary>
    public static void MakeFamilyByFamily(MultiplexerMetrics metrics, IReadOnlyList<(string Multiplexer, string Endpoint, bool Owned)> endpoints)
    {
        // The constructor's families, in its order; operations and subscriptions an app's multiplexer's only (as above).
        (Action<string, string> Make, bool AppOnly)[] families =
        [
            ((multiplexer, endpoint) => metrics.Connected.WithLabels(multiplexer, endpoint), false),
            ((multiplexer, endpoint) => metrics.SentAwaitingResponse.WithLabels(multiplexer, endpoint), false),
            ((multiplexer, endpoint) => metrics.PendingUnsent.WithLabels(multiplexer, endpoint), false),
            ((multiplexer, endpoint) => metrics.Operations.WithLabels(multiplexer, endpoint), true),
            ((multiplexer, endpoint) => metrics.Reconnects.WithLabels(multiplexer, endpoint), false),
            ((multiplexer, endpoint) => metrics.Subscriptions.WithLabels(multiplexer, endpoint), true),
        ];
        foreach (var (make, appOnly) in families)
        {
            foreach (var (multiplexer, endpoint, owned) in endpoints)
            {
                if (!(appOnly && owned))
                {
                    make(multiplexer, endpoint);
                }
            }
        }
    }
}
