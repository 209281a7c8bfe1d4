using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MuxWatch.Testing;

namespace MuxWatch.Tests;

public sealed class TimeoutLogWriterTests
{
    private const string Starved = "Timeout performing GET user:42:secret-key (5000ms), qu: 0, qs: 6, in: 0, serverEndpoint: 10.0.0.1:6379, WORKER: (Busy=40,Free=1,Min=8,Max=41)";
    private const string Stalled = "Timeout performing SET other (5000ms), qu: 0, qs: 2, in: 0, serverEndpoint: 10.0.0.2:6379, WORKER: (Busy=1,Free=40,Min=8,Max=41)";

    private readonly ManualTimeProvider _clock = new(DateTimeOffset.Parse("2026-11-22T12:00:00Z", System.Globalization.CultureInfo.InvariantCulture));
    private readonly CollectingLoggerProvider _logs = new();

    [Fact]
    public void A_storm_of_one_cause_writes_one_line_per_interval_and_counts_the_rest()
    {
        var writer = NewWriter(new MuxWatchOptions());

        for (var i = 0; i < 5; i++)
        {
            writer.Settled(Observe(Starved));
        }

        _clock.Advance(TimeSpan.FromSeconds(10));
        writer.Settled(Observe(Starved));

        Assert.Equal(2, _logs.Lines.Count);
        Assert.All(_logs.Lines, line => Assert.Equal(LogLevel.Warning, line.Level));
        Assert.Contains("cause thread-pool-starvation", _logs.Lines[0].Text, StringComparison.Ordinal);
        Assert.Contains("WORKER Busy=40 > Min=8", _logs.Lines[0].Text, StringComparison.Ordinal);
        Assert.Contains("10.0.0.1:6379 (GET)", _logs.Lines[0].Text, StringComparison.Ordinal);
        Assert.Contains("(4 more with this cause", _logs.Lines[1].Text, StringComparison.Ordinal);
    }

    [Fact]
    public void Each_cause_has_its_own_allowance()
    {
        var writer = NewWriter(new MuxWatchOptions());

        writer.Settled(Observe(Starved));
        writer.Settled(Observe(Stalled));

        Assert.Equal(2, _logs.Lines.Count);
        Assert.Contains("cause server-stall", _logs.Lines[1].Text, StringComparison.Ordinal);
    }

    [Fact]
    public void Keys_are_never_logged_and_logging_can_be_turned_off()
    {
        NewWriter(new MuxWatchOptions()).Settled(Observe(Starved));
        NewWriter(new MuxWatchOptions { LogTimeouts = false }).Settled(Observe(Stalled));

        var line = Assert.Single(_logs.Lines);
        Assert.DoesNotContain("secret-key", line.Text, StringComparison.Ordinal);
    }

    private TimeoutLogWriter NewWriter(MuxWatchOptions options)
    {
        // The factory is not disposed: disposing it would dispose the shared provider.
#pragma warning disable CA2000
        var factory = LoggerFactory.Create(builder => builder.AddProvider(_logs).SetMinimumLevel(LogLevel.Trace));
#pragma warning restore CA2000
        return new TimeoutLogWriter(factory.CreateLogger<TimeoutLogWriter>(), _clock, Options.Create(options));
    }

    private ObservedTimeout Observe(string message)
    {
        var report = TimeoutMessageReader.Read(message);
        return new ObservedTimeout(_clock.GetUtcNow(), "first-chance", null, report, TimeoutDiagnoser.Diagnose(report));
    }
}
