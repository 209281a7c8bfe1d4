using System.Globalization;
using Prometheus;

namespace MuxWatch.PrometheusFloor;

/// <summary>A registry holding every family and series of a scrape, each of its own type, as prometheus-net alone would serve them.</summary>
internal static class FloorRegistry
{
    /// <summary>
    /// Makes in <paramref name="registry"/> every family and series of <paramref name="text"/> (the text exposition format),
    /// each of its own type: a histogram a histogram with the same buckets (rendering one costs more than as many gauges:
    /// its cumulative buckets, sum and count per series); returns the series. Made family by family (the scrape's order)
    /// unless <paramref name="targetByTarget"/>: then every series of one target (its <c>endpoint</c> label, else its
    /// <c>multiplexer</c>) before the next, the order in which a running exporter makes them as its targets appear.
    /// </summary>
    /// <remarks>
    /// The order is where the series lie in memory, and a scrape visits them family by family: made target by target,
    /// consecutive series of a family lie a target's worth of objects apart, and the same 27,078 series render about a
    /// tenth to a fifth slower (measured 2026-11-30, native, a scrape of each in turn: 1.08-1.26 times the family-by-family
    /// registry; docs/benchmarks.md).
    /// </remarks>
    public static int Fill(CollectorRegistry registry, string text, bool targetByTarget = false)
    {
        var factory = Metrics.WithCustomRegistry(registry);
        var types = new Dictionary<string, string>(StringComparer.Ordinal);
        var samples = new List<(string Name, string[] Names, string[] Values, double Value)>();
        foreach (var line in text.Split('\n'))
        {
            if (line.StartsWith("# TYPE ", StringComparison.Ordinal) && line.Split(' ') is [_, _, var family, var type])
            {
                types[family] = type;
            }
            else if (line.Length > 0 && line[0] != '#')
            {
                samples.Add(Sample(line));
            }
        }

        string? HistogramOf(string name) =>
            (string[])["_bucket", "_sum", "_count"] is var suffixes && suffixes.FirstOrDefault(name.EndsWith) is { } suffix
            && name[..^suffix.Length] is var family && types.GetValueOrDefault(family) == "histogram" ? family : null;

        // A histogram's buckets: the finite "le" values of its bucket lines (the parser renamed "le" to "bucket_le").
        var buckets = samples.Where(s => s.Name.EndsWith("_bucket", StringComparison.Ordinal) && HistogramOf(s.Name) is not null)
            .GroupBy(s => HistogramOf(s.Name)!)
            .ToDictionary(g => g.Key, g => g.Select(s => s.Values[Array.IndexOf(s.Names, "bucket_le")]).Where(le => le != "+Inf")
                .Select(le => double.Parse(le, NumberStyles.Float, CultureInfo.InvariantCulture)).Distinct().Order().ToArray(), StringComparer.Ordinal);
        if (targetByTarget)
        {
            // A stable sort: within a target, the families stay in the scrape's order; the process' own series come first.
            samples = [.. samples.OrderBy(sample => TargetOf(sample), StringComparer.Ordinal)];
        }

        var histograms = new Dictionary<string, Histogram>(StringComparer.Ordinal);
        var gauges = new Dictionary<string, Gauge>(StringComparer.Ordinal);
        var counters = new Dictionary<string, Counter>(StringComparer.Ordinal);
        foreach (var (name, names, values, value) in samples)
        {
            if (HistogramOf(name) is { } family)
            {
                if (name.EndsWith("_count", StringComparison.Ordinal))
                {
                    if (!histograms.TryGetValue(family, out var histogram))
                    {
                        histograms[family] = histogram = factory.CreateHistogram(family, family, names, new HistogramConfiguration { Buckets = buckets.GetValueOrDefault(family) ?? [] });
                    }

                    histogram.WithLabels(values).Observe(value); // one series (its buckets, sum and count) per label set
                }
            }
            else if (types.GetValueOrDefault(name) == "counter")
            {
                if (!counters.TryGetValue(name, out var counter))
                {
                    counters[name] = counter = factory.CreateCounter(name, name, names);
                }

                counter.WithLabels(values).IncTo(value);
            }
            else
            {
                if (!gauges.TryGetValue(name, out var gauge))
                {
                    gauges[name] = gauge = factory.CreateGauge(name, name, names);
                }

                gauge.WithLabels(values).Set(value);
            }
        }

        return samples.Count;
    }

    /// <summary>The target a series belongs to: its endpoint, else its multiplexer, else none (the process' own).</summary>
    private static string TargetOf((string Name, string[] Names, string[] Values, double Value) sample) =>
        Array.IndexOf(sample.Names, "endpoint") is var endpoint and >= 0 ? sample.Values[endpoint]
        : Array.IndexOf(sample.Names, "multiplexer") is var multiplexer and >= 0 ? sample.Values[multiplexer]
        : string.Empty;

    /// <summary>One sample line: <c>name{a="x",b="y"} 1.5</c>. Label values here hold no quotes or commas (MuxWatch's never do).</summary>
    private static (string Name, string[] Names, string[] Values, double Value) Sample(string line)
    {
        var brace = line.IndexOf('{', StringComparison.Ordinal);
        var space = line.LastIndexOf(' ');
        var value = double.Parse(line[(space + 1)..], NumberStyles.Float, CultureInfo.InvariantCulture);
        if (brace < 0)
        {
            return (line[..space], [], [], value);
        }

        var labels = line[(brace + 1)..line.LastIndexOf('}')]
            .Split("\",", StringSplitOptions.RemoveEmptyEntries)
            .Select(pair => pair.Split("=\"", 2))
            .ToArray();
        // A histogram's "le" is a label prometheus-net keeps for histograms: here it is one of a gauge's, renamed.
        return (line[..brace], [.. labels.Select(l => l[0] == "le" ? "bucket_le" : l[0])], [.. labels.Select(l => l[1].TrimEnd('"'))], value);
    }
}
