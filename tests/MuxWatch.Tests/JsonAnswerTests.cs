using System.Text.Json;

namespace MuxWatch.Tests;

/// <summary>The JSON answers: one kebab-case vocabulary shared with the metric labels, field values with their JSON types.</summary>
public sealed class JsonAnswerTests
{
    [Fact]
    public void Every_cause_and_kind_has_one_name_in_json_and_in_metric_labels()
    {
        string[] causes = ["unknown", "thread-pool-starvation", "client-input-backlog", "large-payload", "write-backlog", "server-stall", "connection-loss", "slow-command", "persistence", "client-cpu", "failover", "gc-pause", "client-defect"];
        Assert.Equal(causes, Enum.GetValues<TimeoutCause>().Select(cause => cause.ToName()));
        foreach (var cause in Enum.GetValues<TimeoutCause>())
        {
            Assert.Equal($"\"{cause.ToName()}\"", MuxWatchJson.Serialize(cause));
        }

        string[] kinds = ["unknown", "sync-timeout", "async-timeout", "backlog-timeout", "write-timeout", "no-connection", "connection-failure"];
        Assert.Equal(kinds, Enum.GetValues<RedisErrorKind>().Select(kind => kind.ToName()));
        foreach (var kind in Enum.GetValues<RedisErrorKind>())
        {
            Assert.Equal($"\"{kind.ToName()}\"", MuxWatchJson.Serialize(kind));
        }

        Assert.Equal(["low", "medium", "high"], Enum.GetValues<DiagnosisConfidence>().Select(c => MuxWatchJson.Serialize(c).Trim('"')));
        Assert.Equal("unknown", ((TimeoutCause)99).ToName());
    }

    [Fact]
    public void A_recorded_timeout_is_written_with_typed_fields_its_id_and_what_was_sampled_at_the_catch()
    {
        var report = TimeoutMessageReader.Read("Timeout performing GET k (5000ms), qu: 0, qs: 6, in: 0, aw: False, serverEndpoint: 10.0.0.1:6379, WORKER: (Busy=40,Free=32727,Min=8,Max=32767), v: 3.4.35");
        var time = new DateTimeOffset(2026, 11, 22, 10, 0, 5, TimeSpan.Zero);
        var timeout = new ObservedTimeout(time, "first-chance", "cache", report, TimeoutDiagnoser.Diagnose(report), new ThreadPoolSnapshot(40, 8, 32767, 0, 8, 1000, 48, 120, 9000))
        {
            Id = 7,
            LiveCountersAtCatch = new LiveCounters("10.0.0.1:6379", true, 51, 0, time),
        };

        using var json = JsonDocument.Parse(MuxWatchJson.Serialize(TimeoutAnswer.From(timeout)));
        var root = json.RootElement;

        Assert.Equal(["id", "time", "source", "waitingSince", "multiplexer", "settled", "kind"], root.EnumerateObject().Take(7).Select(p => p.Name));
        Assert.Equal(7, root.GetProperty("id").GetInt64());
        Assert.Equal(time.AddSeconds(-5), root.GetProperty("waitingSince").GetDateTimeOffset());
        Assert.Equal("sync-timeout", root.GetProperty("kind").GetString());
        Assert.Equal("thread-pool-starvation", root.GetProperty("cause").GetString());
        Assert.Contains("WORKER Busy=40 > Min=8", root.GetProperty("evidence")[0].GetString(), StringComparison.Ordinal); // '>' unescaped
        var fields = root.GetProperty("fields");
        Assert.Equal(JsonValueKind.Number, fields.GetProperty("qs").ValueKind);
        Assert.Equal(JsonValueKind.False, fields.GetProperty("aw").ValueKind);
        Assert.Equal(40, fields.GetProperty("WORKER").GetProperty("Busy").GetInt32());
        Assert.Equal("3.4.35", fields.GetProperty("v").GetString());
        Assert.Equal(40, root.GetProperty("threadPoolAtCatch").GetProperty("workerBusy").GetInt32());
        Assert.True(root.GetProperty("threadPoolAtCatch").GetProperty("isStarved").GetBoolean());
        Assert.Equal(51, root.GetProperty("liveCountersAtCatch").GetProperty("sentAwaitingResponse").GetInt64());
        Assert.False(root.TryGetProperty("notes", out _)); // absent when there is none
    }

    [Fact]
    public void A_posted_timeout_has_no_catch_samples_and_a_one_x_message_no_waiting_since()
    {
        var report = TimeoutMessageReader.Read("Timeout performing GET k, inst: 1, mgr: Inactive, queue: 4, qu: 0, qs: 4, qc: 0, wr: 0, wq: 0, in: 0, ar: 0");
        var timeout = new ObservedTimeout(DateTimeOffset.UnixEpoch, "api", null, report, TimeoutDiagnoser.Diagnose(report));

        using var json = JsonDocument.Parse(MuxWatchJson.Serialize(TimeoutAnswer.From(timeout)));

        Assert.False(json.RootElement.TryGetProperty("waitingSince", out _));
        Assert.False(json.RootElement.TryGetProperty("threadPoolAtCatch", out _));
        Assert.False(json.RootElement.TryGetProperty("liveCountersAtCatch", out _));
        Assert.Equal(JsonValueKind.Null, json.RootElement.GetProperty("multiplexer").ValueKind);
    }

    [Fact]
    public void A_name_repeated_in_a_tuple_is_written_once_with_its_first_value()
    {
        var report = TimeoutMessageReader.Read("Timeout performing GET k (1000ms), qs: 1, in: 0, WORKER: (Busy=1,Busy=900,Free=40,Min=8,Max=41)");

        var json = MuxWatchJson.Serialize(DiagnosisAnswer.From(report, TimeoutDiagnoser.Diagnose(report)));

        Assert.Single(System.Text.RegularExpressions.Regex.Matches(json, "\"Busy\""));
        using var document = JsonDocument.Parse(json);
        Assert.Equal(1, document.RootElement.GetProperty("fields").GetProperty("WORKER").GetProperty("Busy").GetInt32());
    }

    [Fact]
    public void Control_characters_and_huge_values_cannot_inflate_a_kept_entry()
    {
        var controls = new string('\u0001', 20_000);
        var huge = new string('v', 20_000);
        var report = TimeoutMessageReader.Read($"Timeout performing GET k (1000ms), qs: 1, in: 0, a: {controls}, b: {huge}, \uFEFFc: 3");

        var json = MuxWatchJson.Serialize(DiagnosisAnswer.From(report, TimeoutDiagnoser.Diagnose(report)));

        Assert.DoesNotContain("\\u0001", json, StringComparison.Ordinal);
        Assert.True(json.Length < 16 * 1024, $"one entry is {json.Length} characters");
        Assert.Equal(1, report.Number("qs"));
    }
}
