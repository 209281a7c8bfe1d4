
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
}
