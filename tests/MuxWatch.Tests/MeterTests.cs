using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;
using MuxWatch.Export;
using MuxWatch.StackExchangeRedis;
using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Tests;

/// <summary>
/// The <c>MuxWatch</c> meter: every family published, its instruments reading the series the
/// prometheus-net export reads (never a second count), names that OpenTelemetry's Prometheus exporters
/// turn back into the prometheus-net names.
/// </summary>
public sealed class MeterTests : IDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
    private readonly MuxWatchMetrics _metrics = new(Metrics.NewCustomRegistry());
    private readonly MultiplexerMetrics _multiplexers;
    private readonly MuxWatchMeter _meter;

    public MeterTests()
    {
        _meter = new MuxWatchMeter(_services.GetRequiredService<IMeterFactory>(), _metrics);
        _multiplexers = new MultiplexerMetrics(_metrics); // a probe package's families, published after the meter started
    }

    public void Dispose()
    {
        _meter.Dispose();
        _services.Dispose();
    }

    [Theory]
    [InlineData(null, true)] // nothing asked: the meter is there, as the framework's own are
    [InlineData("false", false)] // MuxWatch:Meter=false: no meter
    public async Task An_app_that_only_adds_MuxWatch_has_the_meter_unless_it_turns_it_off(string? setting, bool expected)
    {
        var builder = Microsoft.Extensions.Hosting.Host.CreateApplicationBuilder();
        builder.Configuration["MuxWatch:DiscoverMultiplexers"] = "false";
        if (setting is not null)
        {
            builder.Configuration["MuxWatch:Meter"] = setting;
        }

        builder.Services.AddMuxWatch().UseMetricsRegistry(Metrics.NewCustomRegistry());
        using var host = builder.Build();
        var factory = host.Services.GetRequiredService<IMeterFactory>();
        var published = new List<Instrument>();
        using var listener = new MeterListener
        {
            // This host's meter only: other tests' hosts in this process publish theirs.
            InstrumentPublished = (instrument, _) => { if (instrument.Meter.Name == MuxWatchMeter.MeterName && ReferenceEquals(instrument.Meter.Scope, factory)) { lock (published) { published.Add(instrument); } } },
        };
        listener.Start();

        await host.StartAsync();
        await host.StopAsync();

        Assert.Equal(expected, published.Any(i => i.Name == "muxwatch.timeouts"));
    }

    [Fact]
    public async Task Every_family_of_the_metrics_text_is_an_instrument_whose_exported_name_is_the_same()
    {
        var published = new List<Instrument>();
        var factory = _services.GetRequiredService<IMeterFactory>();
        // This test's meter only: other tests' hosts in this process, started meanwhile, publish theirs.
        using var listener = new MeterListener { InstrumentPublished = (instrument, _) => { if (instrument.Meter.Name == MuxWatchMeter.MeterName && ReferenceEquals(instrument.Meter.Scope, factory)) { lock (published) { published.Add(instrument); } } } };
        listener.Start();
        _multiplexers.InitializeEndpoint("cache", "10.0.0.1:6379", "10.0.0.1:6379", ["first-chance", "probe"]);
        _multiplexers.ObservePing(_multiplexers.Ping.WithLabels("cache", "10.0.0.1:6379"), "cache", "10.0.0.1:6379", 0.001);
        _metrics.ObserveProbeCycle(0.001);
        using var rendered = new MemoryStream();
        await _metrics.Registry.CollectAndExportAsTextAsync(rendered);
        var text = new MetricsText(System.Text.Encoding.UTF8.GetString(rendered.ToArray()));
        Assert.NotEmpty(text.FamilyNames);

        foreach (var family in text.FamilyNames)
        {
            Assert.Contains(published, instrument => ExportedName(instrument) == family);
        }

        Assert.Equal(_metrics.Families.Count, published.Count(instrument => instrument.Meter.Name == MuxWatchMeter.MeterName));
        Assert.All(published.Where(i => i.Meter.Name == MuxWatchMeter.MeterName), instrument => Assert.StartsWith("muxwatch.", instrument.Name, StringComparison.Ordinal));
        var names = published.Where(i => i.Meter.Name == MuxWatchMeter.MeterName).Select(i => i.Name).ToList();
        Assert.Equal(names.Count, names.Distinct().Count()); // one instrument per name: the SDK drops or renames duplicates
    }

    [Fact]
    public void The_instruments_read_the_series_the_export_reads_with_their_labels_as_tags()
    {
        using var timeouts = new MetricCollector<double>(_services.GetRequiredService<IMeterFactory>(), MuxWatchMeter.MeterName, "muxwatch.timeouts");
        using var connected = new MetricCollector<double>(_services.GetRequiredService<IMeterFactory>(), MuxWatchMeter.MeterName, "muxwatch.connected");
        using var busy = new MetricCollector<double>(_services.GetRequiredService<IMeterFactory>(), MuxWatchMeter.MeterName, "muxwatch.threadpool.busy_threads");
        _metrics.Timeouts.WithLabels("cache", "10.0.0.1:6379", "server-stall", "first-chance").Inc(3);
        _multiplexers.Connected.WithLabels("cache", "10.0.0.1:6379").Set(1);
        _metrics.ThreadPoolBusy.WithLabels("worker").Set(7);

        timeouts.RecordObservableInstruments();
        connected.RecordObservableInstruments();
        busy.RecordObservableInstruments();

        var stall = Assert.Single(timeouts.GetMeasurementSnapshot());
        Assert.Equal(3, stall.Value);
        Assert.Equal("cache", stall.Tags["multiplexer"]);
        Assert.Equal("10.0.0.1:6379", stall.Tags["endpoint"]);
        Assert.Equal("server-stall", stall.Tags["cause"]);
        Assert.Equal("first-chance", stall.Tags["source"]);
        Assert.Equal(1, Assert.Single(connected.GetMeasurementSnapshot()).Value);
        Assert.Equal(7, Assert.Single(busy.GetMeasurementSnapshot()).Value);
        Assert.Equal("worker", busy.GetMeasurementSnapshot()[0].Tags["pool"]);
    }

    [Fact]
    public void A_family_without_labels_is_one_measurement_and_a_removed_multiplexer_leaves_both_exports()
    {
        using var threads = new MetricCollector<double>(_services.GetRequiredService<IMeterFactory>(), MuxWatchMeter.MeterName, "muxwatch.threadpool.threads");
        using var connected = new MetricCollector<double>(_services.GetRequiredService<IMeterFactory>(), MuxWatchMeter.MeterName, "muxwatch.connected");
        _metrics.ThreadPoolThreads.Set(12);
        _multiplexers.Connected.WithLabels("gone", "10.0.0.2:6379").Set(1);

        _multiplexers.RemoveMultiplexer("gone");
        threads.RecordObservableInstruments();
        connected.RecordObservableInstruments();

        Assert.Equal(12, Assert.Single(threads.GetMeasurementSnapshot()).Value);
        Assert.Empty(connected.GetMeasurementSnapshot());
        Assert.DoesNotContain(_multiplexers.Connected.GetAllLabelValues(), labels => labels[0] == "gone"); // reading did not bring it back
    }

    [Fact]
    public void A_ping_round_trip_is_recorded_in_both_histograms_with_the_same_buckets()
    {
        using var pings = new MetricCollector<double>(_services.GetRequiredService<IMeterFactory>(), MuxWatchMeter.MeterName, "muxwatch.ping");
        var series = _multiplexers.Ping.WithLabels("cache", "10.0.0.1:6379");

        _multiplexers.ObservePing(series, "cache", "10.0.0.1:6379", 0.002);

        var ping = Assert.Single(pings.GetMeasurementSnapshot());
        Assert.Equal(0.002, ping.Value);
        Assert.Equal("10.0.0.1:6379", ping.Tags["endpoint"]);
        Assert.Equal(1, series.Count);
        Assert.Equal("s", pings.Instrument!.Unit);
        Assert.Equal(MultiplexerMetrics.PingBuckets, ((Histogram<double>)pings.Instrument).Advice!.HistogramBucketBoundaries);
    }

    [Theory]
    [InlineData("muxwatch_timeouts_total", "muxwatch.timeouts", null)]
    [InlineData("muxwatch_ping_seconds", "muxwatch.ping", "s")]
    [InlineData("muxwatch_last_probe_success_timestamp_seconds", "muxwatch.last_probe_success_timestamp", "s")]
    [InlineData("muxwatch_server_cow_size_bytes", "muxwatch.server.cow_size", "By")]
    [InlineData("muxwatch_threadpool_busy_threads", "muxwatch.threadpool.busy_threads", null)]
    [InlineData("muxwatch_server_slowlog_entries_total", "muxwatch.server.slowlog_entries", null)]
    [InlineData("muxwatch_pubsub_delivery_seconds", "muxwatch.pubsub.delivery", "s")]
    public void Instrument_names_follow_the_prometheus_names(string prometheus, string instrument, string? unit)
    {
        Assert.Equal(instrument, MuxWatchMeter.InstrumentName(prometheus, out var actualUnit));
        Assert.Equal(unit, actualUnit);
    }

    /// <summary>What OpenTelemetry's Prometheus exporters call an instrument: dots to underscores, the unit's suffix, _total on a counter.</summary>
    private static string ExportedName(Instrument instrument)
    {
        var name = instrument.Name.Replace('.', '_');
        name += instrument.Unit switch { "s" => "_seconds", "By" => "_bytes", _ => string.Empty };
        return instrument.GetType().Name.StartsWith("ObservableCounter", StringComparison.Ordinal) ? name + "_total" : name;
    }
}
