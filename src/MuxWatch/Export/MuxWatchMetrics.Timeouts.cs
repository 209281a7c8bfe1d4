using MuxWatch.Model;
using Prometheus;

namespace MuxWatch.Export;

/// <summary>
/// The timeouts' families (<c>muxwatch_timeouts_total</c>, <c>muxwatch_last_timeout_*</c>): counted when settled,
/// their endpoints bounded (a posted pair unused for <see cref="PostedEndpointIdle"/> gives its place up).
/// </summary>
public sealed partial class MuxWatchMetrics
{
    private void DeclareTimeoutFamilies()
    {
        Timeouts = Counter(SeriesOwner.Timeouts, "muxwatch_timeouts_total",
            "Redis timeouts and connection errors seen, by primary cause and by how they reached MuxWatch.",
            "multiplexer", "endpoint", "cause", "source");
        LastTimeoutSentAwaitingResponse = Gauge(SeriesOwner.Timeouts, "muxwatch_last_timeout_sent_awaiting_response",
            "qs of the latest timeout: from the live counters when caught in-process on a registered multiplexer, else from its message.", MultiplexerEndpoint);
        LastTimeoutPendingUnsent = Gauge(SeriesOwner.Timeouts, "muxwatch_last_timeout_pending_unsent",
            "qu of the latest timeout (live counters when available, else its message).", MultiplexerEndpoint);
        LastTimeoutInboundBytes = Gauge(SeriesOwner.Timeouts, "muxwatch_last_timeout_inbound_bytes",
            "in (bytes received, not yet read) of the latest timeout's message.", MultiplexerEndpoint);
        LastTimeoutBusyWorkerThreads = Gauge(SeriesOwner.Timeouts, "muxwatch_last_timeout_busy_worker_threads",
            "Busy worker threads when the latest timeout was raised (its WORKER figure, or MuxWatch's sample at the catch).", MultiplexerEndpoint);
        LastTimeoutTimestamp = Gauge(SeriesOwner.Timeouts, "muxwatch_last_timeout_timestamp_seconds",
            "When the latest timeout was raised (unix seconds).", MultiplexerEndpoint);
    }

    /// <summary>Counts one diagnosed timeout and sets the last-seen gauges of what it carried.</summary>
    internal void RecordTimeout(ObservedTimeout timeout, DateTimeOffset now)
    {
        var multiplexer = timeout.Multiplexer ?? UnknownMultiplexer;
        var pair = multiplexer + "\n" + timeout.Endpoint;
        string admitted;
        if (timeout.Source is TimeoutSources.FirstChance or TimeoutSources.Probe)
        {
            admitted = _ownTimeoutEndpoints.Admit(pair);
        }
        else
        {
            admitted = _postedTimeoutEndpoints.Admit(pair, now, out var freed);
            if (freed is not null)
            {
                RemoveTimeoutSeries(freed);
            }
        }

        var endpoint = admitted == BoundedLabelValues.Other ? BoundedLabelValues.Other : timeout.Endpoint;
        Timeouts.WithLabels(multiplexer, endpoint, timeout.Diagnosis.Cause.ToName(), timeout.Source).Inc();

        var report = timeout.Report;
        var live = timeout.LiveCountersAtCatch;
        SetIfKnown(LastTimeoutSentAwaitingResponse, multiplexer, endpoint, live is { SentAwaitingResponse: > 0 } ? live.SentAwaitingResponse : report.Number("qs"));
        SetIfKnown(LastTimeoutPendingUnsent, multiplexer, endpoint, live is { PendingUnsent: > 0 } ? live.PendingUnsent : report.Number("qu"));
        SetIfKnown(LastTimeoutInboundBytes, multiplexer, endpoint, report.Number("in"));
        SetIfKnown(LastTimeoutBusyWorkerThreads, multiplexer, endpoint, report.Field("WORKER")?.Part("Busy") ?? timeout.ThreadPoolAtCatch?.WorkerBusy);
        LastTimeoutTimestamp.WithLabels(multiplexer, endpoint).Set(timeout.Time.ToUnixTimeMilliseconds() / 1000.0);
    }

    /// <summary>Removes the timeout series of one posted multiplexer/endpoint pair whose label place was given up.</summary>
    private void RemoveTimeoutSeries(string pair)
    {
        lock (SeriesGate)
        {
            RemoveTimeoutSeriesUngated(pair);
        }
    }

    private void RemoveTimeoutSeriesUngated(string pair)
    {
        var separator = pair.IndexOf('\n', StringComparison.Ordinal);
        var (multiplexer, endpoint) = (pair[..separator], pair[(separator + 1)..]);
        foreach (var family in FamiliesOwnedBy(SeriesOwner.Timeouts))
        {
            RemoveWhere(family, labels => labels.Length > 1 && labels[0] == multiplexer && labels[1] == endpoint);
        }
    }

    private static void SetIfKnown(Gauge gauge, string multiplexer, string endpoint, double? value)
    {
        if (value is { } known)
        {
            gauge.WithLabels(multiplexer, endpoint).Set(known);
        }
    }
}
