using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Reflection;
using Prometheus;

namespace MuxWatch.Export;

/// <summary>
/// Publishes every MuxWatch family through a <see cref="Meter"/> named <c>MuxWatch</c>, for apps that
/// report through OpenTelemetry (<c>AddOpenTelemetry().WithMetrics(m =&gt; m.AddMeter("MuxWatch"))</c>).
/// </summary>
/// <remarks>
/// Counters and gauges are observable instruments that read the very series the prometheus-net export
/// reads, when the listener collects: nothing is probed or counted twice. The two histograms (PING
/// round trips, probe cycles) are recorded where the prometheus-net ones are observed, with the same
/// bucket boundaries. Instrument names are the Prometheus names with dots for namespaces and without
/// the unit and <c>_total</c> suffixes, which OpenTelemetry's Prometheus exporters add back, so an
/// OpenTelemetry user scrapes the same names and the shipped alert rules and dashboards apply unchanged
/// (docs/metrics.md, "OpenTelemetry").
/// </remarks>
internal sealed class MuxWatchMeter : IDisposable
{
    /// <summary>The meter's name, to pass to <c>AddMeter</c>.</summary>
    public const string MeterName = "MuxWatch";

    private readonly Meter _meter;
    private readonly MuxWatchMetrics _metrics;
    // Written when a family is published (a probe package publishes its families at run time) while the pipeline's
    // threads record: a concurrent dictionary, so that a read never meets a write in progress.
    private readonly ConcurrentDictionary<Prometheus.Histogram, Histogram<double>> _histograms = new();

    /// <summary>Creates the meter through <paramref name="factory"/> and publishes <paramref name="metrics"/>' families in it.</summary>
    public MuxWatchMeter(IMeterFactory factory, MuxWatchMetrics metrics)
    {
        ArgumentNullException.ThrowIfNull(factory);
        ArgumentNullException.ThrowIfNull(metrics);
        _metrics = metrics;
        // The version without its build metadata (+commit): a label value that changes with every build would split every series.
        var version = typeof(MuxWatchMeter).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion;
        _meter = factory.Create(new MeterOptions(MeterName) { Version = version?.Split('+')[0] });
        metrics.AttachMeter(this); // publishes the families known now, and those a probe package publishes later
    }

    /// <summary>Records one observation of a histogram <paramref name="family"/> with its label values.</summary>
    internal void Record(Prometheus.Histogram family, ReadOnlySpan<string> labelValues, double value)
    {
        if (!_histograms.TryGetValue(family, out var histogram) || !histogram.Enabled)
        {
            return; // not published, or nobody listening: nothing to record, nothing allocated
        }

        var names = family.LabelNames;
        Span<KeyValuePair<string, object?>> tags = new KeyValuePair<string, object?>[names.Length];
        for (var i = 0; i < names.Length; i++)
        {
            tags[i] = new KeyValuePair<string, object?>(names[i], labelValues[i]);
        }

        histogram.Record(value, tags);
    }

    /// <summary>
    /// The instrument name for a Prometheus family name, and its unit: <c>muxwatch_timeouts_total</c> is
    /// <c>muxwatch.timeouts</c>, <c>muxwatch_server_latest_fork_seconds</c> is
    /// <c>muxwatch.server.latest_fork</c> in <c>s</c>, <c>muxwatch_server_cow_size_bytes</c> is
    /// <c>muxwatch.server.cow_size</c> in <c>By</c>.
    /// </summary>
    public static string InstrumentName(string prometheusName, out string? unit)
    {
        ArgumentNullException.ThrowIfNull(prometheusName);
        var name = prometheusName.EndsWith("_total", StringComparison.Ordinal) ? prometheusName[..^"_total".Length] : prometheusName;
        unit = null;
        if (name.EndsWith("_seconds", StringComparison.Ordinal))
        {
            (name, unit) = (name[..^"_seconds".Length], "s");
        }
        else if (name.EndsWith("_bytes", StringComparison.Ordinal))
        {
            (name, unit) = (name[..^"_bytes".Length], "By");
        }

        // The namespaces: muxwatch, and within it the server's, the thread pool's, pub/sub's and the subscription connection's families.
        foreach (var space in (string[])["muxwatch_server_", "muxwatch_threadpool_", "muxwatch_pubsub_", "muxwatch_subscription_", "muxwatch_"])
        {
            if (name.StartsWith(space, StringComparison.Ordinal))
            {
                return space.Replace('_', '.') + name[space.Length..];
            }
        }

        return name;
    }

    /// <inheritdoc />
    public void Dispose() => _meter.Dispose();

    /// <summary>Creates the instrument of one family (called by <see cref="MuxWatchMetrics"/>, once each).</summary>
    internal void Publish(Collector family)
    {
        var name = InstrumentName(family.Name, out var unit);
        switch (family)
        {
            case Counter counter:
                _meter.CreateObservableCounter(name, () => Read(counter.LabelNames, counter.GetAllLabelValues, labels => labels.Length == 0 ? counter.Value : counter.WithLabels(labels).Value), unit, counter.Help);
                break;
            case Gauge gauge:
                _meter.CreateObservableGauge(name, () => Read(gauge.LabelNames, gauge.GetAllLabelValues, labels => labels.Length == 0 ? gauge.Value : gauge.WithLabels(labels).Value), unit, gauge.Help);
                break;
            case Prometheus.Histogram histogram:
                // No observable histogram exists: recorded where the prometheus-net one is observed, with its buckets.
                _histograms[histogram] = _meter.CreateHistogram(name, unit, histogram.Help,
                    advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = _metrics.BucketsOf(histogram) });
                break;
            default:
                break;
        }
    }

    /// <summary>Every series of a family as it stands (one for a family without labels), read under the gate that removal takes (a read never brings a removed series back).</summary>
    private List<Measurement<double>> Read(string[] names, Func<IEnumerable<string[]>> series, Func<string[], double> value)
    {
        var measurements = new List<Measurement<double>>();
        lock (_metrics.SeriesGate)
        {
            foreach (var labels in names.Length == 0 ? [[]] : series())
            {
                var tags = new KeyValuePair<string, object?>[names.Length];
                for (var i = 0; i < names.Length; i++)
                {
                    tags[i] = new KeyValuePair<string, object?>(names[i], labels[i]);
                }

                measurements.Add(new Measurement<double>(value(labels), tags));
            }
        }

        return measurements;
    }
}
