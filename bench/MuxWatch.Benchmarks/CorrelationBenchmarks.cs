using BenchmarkDotNet.Attributes;
using MuxWatch.Diagnosis;
using MuxWatch.Model;
using MuxWatch.Reading;
using MuxWatch.State;

namespace MuxWatch.Benchmarks;

/// <summary>
/// The correlator's cost per timeout: the events overlapping the request's 5-second wait looked up in its
/// endpoint's timeline and the diagnosis refined, against an empty timeline and a full one (the 10,000
/// events the timeline keeps, spread over its hour: slow commands, with a BGSAVE and its fork every
/// minute).
/// </summary>
[MemoryDiagnoser]
public class CorrelationBenchmarks
{
    private static readonly DateTimeOffset Start = new(2026, 11, 22, 12, 0, 0, TimeSpan.Zero);
    private static readonly DateTimeOffset Now = Start.AddHours(1);
    private readonly TimeoutDiagnosis _diagnosis = TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(BenchmarkMessages.Timeout));
    private ServerTimeline _timeline = null!;

    [Params(0, ServerTimeline.MaxEvents)]
    public int Events { get; set; }

    /// <summary>When the request waited: the last 5 s of the hour (a timeout caught now) or the 30th minute (a posted old one).</summary>
    [Params("recent", "mid-hour")]
    public string Window { get; set; } = "recent";

    [GlobalSetup]
    public void Fill()
    {
        _timeline = new ServerTimeline("10.0.0.5:6379", TimeSpan.FromHours(1));
        var step = TimeSpan.FromHours(1) / Math.Max(1, Events);
        for (var i = 0; i < Events; i++)
        {
            var at = Start + (step * i);
            var ended = (i % 170) switch
            {
                0 => new ServerEvent(ServerEventKind.Bgsave, at, at.AddSeconds(2)) { Outcome = "ok" },
                1 => new ServerEvent(ServerEventKind.Fork, at, at.AddMilliseconds(40)) { DurationMs = 40 },
                _ => new ServerEvent(ServerEventKind.SlowCommand, at, at.AddMilliseconds(15)) { Command = "KEYS", DurationMs = 15, SlowlogId = i },
            };
            _timeline.Log.Add(ended, Now);
        }
    }

    /// <summary>One timeout whose request waited 5 s.</summary>
    [Benchmark]
    public TimeoutDiagnosis CorrelateOneTimeout()
    {
        var to = Window == "recent" ? Now : Start.AddMinutes(30);
        var from = to.AddSeconds(-5);
        return TimelineCorrelation.Refine(_diagnosis, _timeline.Overlapping(from, to, Now), from, to);
    }
}
