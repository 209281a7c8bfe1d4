using System.Globalization;
using System.Text.Json;
using Xunit.Abstractions;

namespace MuxWatch.Tests;

/// <summary>
/// Real messages from public reports (<c>Corpus/public-reports.json</c>: one row per message, with its
/// thread, the cause the thread reached when it reached one, and the cause MuxWatch names), across
/// 1.0, 1.x, 2.x, 2.6 and 3.x and as people paste them (OCR'd, cut off). Each row is a test of its own,
/// so a rule change that flips one shows by name.
/// </summary>
public sealed class PublicReportsCorpusTests(ITestOutputHelper output)
{
    private static readonly Lazy<Dictionary<string, JsonElement>> Rows = new(() =>
    {
        var path = Path.Combine(AppContext.BaseDirectory, "Corpus", "public-reports.json");
        using var document = JsonDocument.Parse(File.ReadAllText(path));
        return document.RootElement.EnumerateArray().ToDictionary(r => r.GetProperty("id").GetString()!, r => r.Clone());
    });

    public static TheoryData<string> Ids() => new(Rows.Value.Keys);

    private static TimeoutDiagnosis Diagnose(JsonElement row) =>
        TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(row.GetProperty("message").GetString()));

    [Theory]
    [MemberData(nameof(Ids))]
    public void Each_reported_message_gets_the_cause_the_table_names(string id)
    {
        var row = Rows.Value[id];
        var diagnosis = Diagnose(row);

        Assert.True(row.GetProperty("cause").GetString() == diagnosis.Cause.ToName(),
            $"{id} ({row.GetProperty("source").GetString()}): expected {row.GetProperty("cause").GetString()}, got {diagnosis.Cause.ToName()} ({diagnosis.Confidence})\n  "
            + string.Join("\n  ", diagnosis.EvidenceLines));
    }

    [Fact]
    public void Every_row_names_its_source_and_a_cause_from_the_vocabulary()
    {
        var names = Enum.GetValues<TimeoutCause>().Select(c => c.ToName()).ToHashSet(StringComparer.Ordinal);
        foreach (var (id, row) in Rows.Value)
        {
            Assert.False(string.IsNullOrWhiteSpace(row.GetProperty("source").GetString()), id);
            Assert.Contains(row.GetProperty("cause").GetString() ?? string.Empty, names);
        }
    }

    /// <summary>The share of rows whose thread reached a cause where MuxWatch names the same one, printed; it must not fall.</summary>
    [Fact]
    public void Agreement_with_the_threads_is_reported_and_does_not_fall()
    {
        var concluded = Rows.Value.Values.Where(r => r.GetProperty("thread").ValueKind == JsonValueKind.String).ToList();
        var agreeing = concluded.Count(r => r.GetProperty("thread").GetString() == Diagnose(r).Cause.ToName());
        var share = (double)agreeing / concluded.Count;
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"corpus: {Rows.Value.Count} messages, {concluded.Count} with a thread's conclusion; MuxWatch agrees on {agreeing} ({share:P0})"));

        // The rows where MuxWatch differs say why in their note (a cause outside the vocabulary: client
        // load, a too-short timeout, a client bug). More disagreement than that is a regression.
        Assert.True(share >= 0.95, $"agreement fell to {share:P0}");
    }
}
