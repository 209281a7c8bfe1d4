using System.Collections.Concurrent;
using System.Globalization;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Measures how late a multiplexer delivers pub/sub messages (opt-in: <c>MeasurePubSubLag</c>): MuxWatch
/// subscribes through the watched multiplexer to a channel of its own, and every probe cycle publishes a
/// small stamped message on it through the same multiplexer. The time from PUBLISH to MuxWatch's handler
/// is what every handler-based subscription of the app waits too: the server, the subscription
/// connection's reading, and the thread pool the client hands each message to.
/// </summary>
/// <remarks>
/// Never in the way: the subscribe is asynchronous and bounded by the probe timeout, a publish is fire
/// and forget, at most <see cref="MaxUndelivered"/> probe messages are ever outstanding (then publishing
/// stops until they arrive), and the channel is one the app never uses (a name with this process' id
/// and a random part), so no other subscriber or app instance sees the messages.
/// </remarks>
internal sealed class PubSubLagProbe
{
    /// <summary>The most probe messages outstanding at once.</summary>
    public const int MaxUndelivered = 64;

    /// <summary>
    /// How long a probe message may stay undelivered before it counts as lost: pub/sub delivers at most
    /// once, and a message published while the subscription connection was down never arrives. Without
    /// this, lost messages would hold the lag up, and 64 of them would stop the probe for good.
    /// </summary>
    public static readonly TimeSpan LostAfter = TimeSpan.FromSeconds(10);

    private readonly string _multiplexer;
    private readonly MultiplexerMetrics _metrics;
    private readonly TimeProvider _time;
    private readonly RedisChannel _channel;
    private readonly Action<RedisChannel, RedisValue> _handler;
    private readonly ConcurrentDictionary<long, long> _undelivered = new(); // sequence → timestamp (TimeProvider's) at PUBLISH
    private IConnectionMultiplexer? _subscribedOn;
    private Task? _subscribing;
    private long _sequence;
    private long _lastDelivered; // timestamp of the latest delivery (or of the subscription, before the first)
    private double _lastLag;
    private string? _endpoint;
    private Prometheus.Histogram.Child? _delivery;

    public PubSubLagProbe(string multiplexer, MultiplexerMetrics metrics, TimeProvider time)
    {
        _multiplexer = multiplexer;
        _metrics = metrics;
        _time = time;
        // The constructor, not RedisChannel.Literal, which 2.6.90 (the floor) lacks.
        _channel = new RedisChannel($"__muxwatch:pubsub-lag:{multiplexer}:{Environment.ProcessId}:{Guid.NewGuid():N}", RedisChannel.PatternMode.Literal);
        _handler = (_, message) => Delivered(message);
    }

    /// <summary>The channel the probe messages go through (MuxWatch's own).</summary>
    public RedisChannel Channel => _channel;

    /// <summary>The node the channel's subscription lives on, once subscribed.</summary>
    public string? Endpoint => _endpoint;

    /// <summary>One cycle: subscribe when needed (in the background), export what was measured, publish the next probe message.</summary>
    public void Sample(IConnectionMultiplexer multiplexer, TimeSpan subscribeTimeout)
    {
        if (!ReferenceEquals(Volatile.Read(ref _subscribedOn), multiplexer))
        {
            Subscribe(multiplexer, subscribeTimeout);
            return;
        }

        if (_subscribing is not { IsCompleted: true } subscribing)
        {
            return;
        }

        if (!subscribing.IsCompletedSuccessfully)
        {
            Volatile.Write(ref _subscribedOn, null); // failed or timed out: tried again next cycle
            return;
        }

        var subscriber = multiplexer.GetSubscriber();

        // While the subscription's connection is down (a restart), the client names no node: the series keep the
        // node they had (a series keeps its endpoint for its whole life, and its lost counter never goes back);
        // they move only when the subscription is on another node. Before any is known, a multiplexer of one
        // server names that one.
        var endpoint = subscriber.SubscribedEndpoint(_channel) is { } node ? EndpointText.Of(node)
            : _endpoint ?? (multiplexer.GetEndPoints() is [var only] ? EndpointText.Of(only) : "unknown");
        if (endpoint != _endpoint)
        {
            if (_endpoint is not null)
            {
                RemoveSeries(_endpoint); // the subscription moved to another node
            }

            _endpoint = endpoint;
            _delivery = _metrics.PubSubDelivery.WithLabels(_multiplexer, endpoint);
        }

        _metrics.PubSubSubscribed.WithLabels(_multiplexer, endpoint).Set(subscriber.IsConnected(_channel) ? 1 : 0);
        ExportSubscriptionCounters(multiplexer, endpoint);

        var now = _time.GetTimestamp();
        foreach (var (sequence, sentAt) in _undelivered)
        {
            if (_time.GetElapsedTime(sentAt, now) > LostAfter && _undelivered.TryRemove(sequence, out _))
            {
                _metrics.PubSubLost.WithLabels(_multiplexer, endpoint).Inc();
            }
        }

        var oldest = _undelivered.IsEmpty ? (long?)null : _undelivered.Values.Min();
        var waiting = oldest is { } published ? _time.GetElapsedTime(published, now).TotalSeconds : 0;
        _metrics.PubSubLag.WithLabels(_multiplexer, endpoint).Set(Math.Max(Volatile.Read(ref _lastLag), waiting));
        _metrics.PubSubLastDeliveryAge.WithLabels(_multiplexer, endpoint).Set(_time.GetElapsedTime(Interlocked.Read(ref _lastDelivered), now).TotalSeconds);
        _metrics.PubSubUndelivered.WithLabels(_multiplexer, endpoint).Set(_undelivered.Count);
        _metrics.PubSubLost.WithLabels(_multiplexer, endpoint).Inc(0);

        if (_undelivered.Count < MaxUndelivered)
        {
            var next = Interlocked.Increment(ref _sequence);
            _undelivered[next] = now;
            var message = string.Create(CultureInfo.InvariantCulture, $"{next}:{now}");
            UntracedCommand.Send(() => subscriber.Publish(_channel, message, CommandFlags.FireAndForget));
        }
    }

    /// <summary>Unsubscribes (fire and forget) and removes the series: the multiplexer was retired or MuxWatch stops.</summary>
    public void Stop()
    {
        if (Interlocked.Exchange(ref _subscribedOn, null) is { } multiplexer && !MultiplexerInspection.IsDisposed(multiplexer))
        {
            try
            {
                multiplexer.GetSubscriber().Unsubscribe(_channel, _handler, CommandFlags.FireAndForget);
            }
            catch (ObjectDisposedException)
            {
                // disposed meanwhile: nothing to unsubscribe from
            }
        }

        if (_endpoint is not null)
        {
            RemoveSeries(_endpoint);
            _endpoint = null;
        }
    }

    private void Subscribe(IConnectionMultiplexer multiplexer, TimeSpan timeout)
    {
        if (_subscribing is { IsCompleted: false })
        {
            return;
        }

        _undelivered.Clear();
        Volatile.Write(ref _lastLag, 0);
        Interlocked.Exchange(ref _lastDelivered, _time.GetTimestamp());
        Volatile.Write(ref _subscribedOn, multiplexer);
        _subscribing = UntracedCommand.Send(() => multiplexer.GetSubscriber().SubscribeAsync(_channel, _handler)).WaitAsync(timeout);
    }

    /// <summary>The handler: runs where the client runs every handler-based subscription's handler (a pool thread).</summary>
    private void Delivered(RedisValue message)
    {
        var now = _time.GetTimestamp();
        var text = (string?)message;
        var colon = text?.IndexOf(':', StringComparison.Ordinal) ?? -1;
        if (colon <= 0
            || !long.TryParse(text.AsSpan(0, colon), NumberStyles.None, CultureInfo.InvariantCulture, out var sequence)
            || !_undelivered.TryRemove(sequence, out var published))
        {
            return; // not one of this probe's outstanding messages
        }

        var lag = _time.GetElapsedTime(published, now).TotalSeconds;
        Volatile.Write(ref _lastLag, lag);
        Interlocked.Exchange(ref _lastDelivered, now);
        if (_delivery is { } series)
        {
            _metrics.ObservePubSubDelivery(series, _multiplexer, _endpoint ?? "unknown", lag);
        }
    }

    private void ExportSubscriptionCounters(IConnectionMultiplexer multiplexer, string endpoint)
    {
        foreach (var server in multiplexer.GetServers())
        {
            if (EndpointText.Of(server.EndPoint) == endpoint)
            {
                var counters = server.GetCounters().Subscription;
                _metrics.SubscriptionSentAwaitingResponse.WithLabels(_multiplexer, endpoint).Set(counters.SentItemsAwaitingResponse);
                _metrics.SubscriptionPendingUnsent.WithLabels(_multiplexer, endpoint).Set(counters.PendingUnsentItems);
                _metrics.SubscriptionOperations.WithLabels(_multiplexer, endpoint).IncTo(counters.OperationCount);
                return;
            }
        }
    }

    private void RemoveSeries(string endpoint) => _metrics.RemovePubSubSeries(_multiplexer, endpoint);
}
