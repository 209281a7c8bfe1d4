using System.Diagnostics;
using System.Globalization;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Benchmarks;

/// <summary>
/// The floor under a <c>/metrics</c> figure, measured in the same run: prometheus-net alone, serving a registry that
/// holds the same families and series as a scrape (gauges, counters and histograms, each as it is: the same lines),
/// from a minimal ASP.NET Core endpoint in this process, timed by the
/// same curl on one kept-alive connection once warm (until this process's JIT settles). What any exporter built on prometheus-net
/// takes to render and send that many series on this machine; MuxWatch's own answer is measured against it.
/// </summary>
internal static class PrometheusNetFloor
{
    /// <summary>The median time, in ms, prometheus-net alone takes to serve the series of <paramref name="scraped"/>, over <paramref name="scrapes"/> scrapes.</summary>
    public static async Task<double> MedianAsync(string scraped, int scrapes)
    {
        var registry = Metrics.NewCustomRegistry();
        var series = Fill(registry, scraped);
        var port = FreePort.Next();
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls($"http://127.0.0.1:{port}");
        await using var app = builder.Build();
        app.MapGet("/metrics", async (HttpContext context) =>
        {
            context.Response.ContentType = "text/plain; version=0.0.4; charset=utf-8";
            await registry.CollectAndExportAsTextAsync(context.Response.Body, context.RequestAborted);
        });
        await app.StartAsync();
        var url = new Uri($"http://127.0.0.1:{port}/metrics");
        var warmups = 0;
        using (var client = new HttpClient())
        {
            // This process is JIT-compiled: warmed until the JIT has compiled nothing for it over a whole second of scrapes,
            // not a fixed count. With as many warm-ups as timed scrapes, the floor came out at 13 ms in one run and 33-35 ms
            // in the two before it on the same build: timed while its rendering was still being recompiled.
            var last = System.Runtime.JitInfo.GetCompiledMethodCount();
            var quietSince = Stopwatch.StartNew();
            while (warmups < 20 * scrapes && (warmups < scrapes || quietSince.Elapsed < TimeSpan.FromSeconds(1)))
            {
                _ = await client.GetStringAsync(url);
                warmups++;
                if (System.Runtime.JitInfo.GetCompiledMethodCount() is var compiled && compiled != last)
                {
                    (last, quietSince) = (compiled, Stopwatch.StartNew());
                }
            }
        }

        var times = await SidecarScale.TimedByCurlAsync(url, scrapes);
        await app.StopAsync();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"    prometheus-net alone, the same {series:N0} series: /metrics {times[times.Count / 2]:F2} ms median (after {warmups} warm-up scrapes)"));
        return times[times.Count / 2];
    }

    /// <summary>
    /// Makes in <paramref name="registry"/> every family and series of <paramref name="text"/> (the text exposition format),
    /// each of its own type: a histogram a histogram with the same buckets (rendering one costs more than as many gauges:
    /// its cumulative buckets, sum and count per series); returns the series.
    /// </summary>
    private static int Fill(CollectorRegistry registry, string text)
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
