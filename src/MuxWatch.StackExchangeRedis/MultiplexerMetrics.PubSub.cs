using Prometheus;

namespace MuxWatch.StackExchangeRedis;

/// <content>The pub/sub families: a multiplexer's delivery lag, measured on a channel of MuxWatch's own (opt-in), and its subscription connection.</content>
internal sealed partial class MultiplexerMetrics
{
    /// <summary>The delivery histogram's buckets, 1 ms to 30 s: a healthy delivery, a busy pool, a handler that blocks.</summary>
    internal static double[] PubSubDeliveryBuckets { get; } = [0.001, 0.005, 0.025, 0.1, 0.5, 1, 2.5, 5, 10, 30];

    /// <summary>How long MuxWatch's probe messages took from PUBLISH to its handler.</summary>
    public Histogram PubSubDelivery { get; private set; } = null!;

    /// <summary>The latest delivery's lag, or the age of the oldest probe message still undelivered when that is larger.</summary>
    public Gauge PubSubLag { get; private set; } = null!;

    /// <summary>Seconds since a probe message was last delivered.</summary>
    public Gauge PubSubLastDeliveryAge { get; private set; } = null!;

    /// <summary>Probe messages published and not yet delivered.</summary>
    public Gauge PubSubUndelivered { get; private set; } = null!;

    /// <summary>Probe messages never delivered within 10 s, counted as lost (pub/sub delivers at most once).</summary>
    public Counter PubSubLost { get; private set; } = null!;

    /// <summary>1 while the probe channel's subscription is connected.</summary>
    public Gauge PubSubSubscribed { get; private set; } = null!;

    /// <summary>The subscription connection's commands awaiting a reply.</summary>
    public Gauge SubscriptionSentAwaitingResponse { get; private set; } = null!;

    /// <summary>The subscription connection's commands not yet written.</summary>
    public Gauge SubscriptionPendingUnsent { get; private set; } = null!;

    /// <summary>The subscription connection's operations.</summary>
    public Counter SubscriptionOperations { get; private set; } = null!;

    /// <summary>Records one probe message's delivery.</summary>
    public void ObservePubSubDelivery(Histogram.Child series, string multiplexer, string endpoint, double seconds) =>
        Core.Observe(PubSubDelivery, series, [multiplexer, endpoint], seconds);

    /// <summary>Removes one multiplexer's pub/sub series on <paramref name="endpoint"/> (its probe stopped, or its subscription moved to another node).</summary>
    public void RemovePubSubSeries(string multiplexer, string endpoint) =>
        Core.RemoveSeriesWhere(_pubSubFamilies, labels => labels.Length == 2 && labels[0] == multiplexer && labels[1] == endpoint);

    private void DeclarePubSubFamilies()
    {
        var first = _families.Count;
        PubSubDelivery = Histogram("muxwatch_pubsub_delivery_seconds",
            "From PUBLISH to the handler, for MuxWatch's probe messages on a channel of its own (opt-in: MeasurePubSubLag).", PubSubDeliveryBuckets, MultiplexerEndpoint);
        PubSubLag = Gauge("muxwatch_pubsub_lag_seconds",
            "The latest probe message's delivery lag, or the age of the oldest one still undelivered when that is larger.", MultiplexerEndpoint);
        PubSubLastDeliveryAge = Gauge("muxwatch_pubsub_last_delivery_age_seconds",
            "Seconds since a probe message was last delivered (since the subscription was made, before the first).", MultiplexerEndpoint);
        PubSubUndelivered = Gauge("muxwatch_pubsub_undelivered",
            "Probe messages published and not yet delivered (MuxWatch stops publishing at 64).", MultiplexerEndpoint);
        PubSubLost = Counter("muxwatch_pubsub_lost_total",
            "Probe messages not delivered within 10 s, counted as lost (published while the subscription connection was down, say: pub/sub delivers at most once).", MultiplexerEndpoint);
        PubSubSubscribed = Gauge("muxwatch_pubsub_subscribed",
            "1 while the probe channel's subscription is connected (ISubscriber.IsConnected), else 0.", MultiplexerEndpoint);
        SubscriptionSentAwaitingResponse = Gauge("muxwatch_subscription_sent_awaiting_response",
            "The subscription connection's commands written and awaiting a reply (the client's sub counters).", MultiplexerEndpoint);
        SubscriptionPendingUnsent = Gauge("muxwatch_subscription_pending_unsent",
            "The subscription connection's commands queued and not yet written (the client's sub counters).", MultiplexerEndpoint);
        SubscriptionOperations = Counter("muxwatch_subscription_operations_total",
            "Operations on the subscription connection (the client's sub counters).", MultiplexerEndpoint);
        _pubSubFamilies = _families[first..];
    }

    /// <summary>The families above, which a probe's end or a subscription's move removes for one endpoint.</summary>
    private List<Collector> _pubSubFamilies = [];
}
