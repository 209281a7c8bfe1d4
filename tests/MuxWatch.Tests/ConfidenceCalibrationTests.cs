using System.Globalization;
using MuxWatch.Testing;
using Xunit.Abstractions;

namespace MuxWatch.Tests;

/// <summary>
/// What the confidence words mean, measured the way the held-out principle asks: the rules were written from
/// <c>Corpus/public-reports.json</c> (the tuning part) and are measured on <c>Corpus/held-out-reports.json</c>,
/// public messages whose thread reached a cause, gathered after the rules and never used to change them. A row
/// that made a rule change moves to the tuning part (and the held-out part needs new messages to stay honest).
/// The table is printed for docs/diagnosis.md ("What the confidence words mean"); the floors below fail the
/// build when "high" stops meaning what the docs say.
/// </summary>
public sealed class ConfidenceCalibrationTests(ITestOutputHelper output)
{
    private static List<(string Id, string Thread, TimeoutDiagnosis Diagnosis)> Part(string file) =>
        [.. ConcludedReports.Read(Path.Combine(AppContext.BaseDirectory, "Corpus", file))
            .Select(r => (r.Id, r.Thread, TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(r.Message))))];

    /// <summary>Per confidence word: how many answers, how many agreed with the thread.</summary>
    internal static IReadOnlyDictionary<DiagnosisConfidence, (int Said, int Right)> ByWord(IEnumerable<(string Id, string Thread, TimeoutDiagnosis Diagnosis)> rows) =>
        rows.GroupBy(r => r.Diagnosis.Confidence)
            .ToDictionary(g => g.Key, g => (g.Count(), g.Count(r => r.Diagnosis.Cause.ToName() == r.Thread)));

    [Fact]
    public void No_message_is_in_both_parts()
    {
        // A message the rules were written from cannot measure them: the same thread in both parts would count a tuned answer as held out.
        static IEnumerable<string> Sources(string file) =>
            ConcludedReports.Read(Path.Combine(AppContext.BaseDirectory, "Corpus", file)).Select(r => r.Source);

        Assert.Empty(Sources("held-out-reports.json").Intersect(Sources("public-reports.json")));
    }

    [Fact]
    public void High_is_right_on_messages_the_rules_were_not_written_from_as_often_as_measured_and_the_words_are_ordered()
    {
        var tuning = Part("public-reports.json");
        var heldOut = Part("held-out-reports.json");
        foreach (var (name, rows) in new[] { ("tuning", tuning), ("held-out", heldOut) })
        {
            var table = ByWord(rows);
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{name}: {rows.Count} messages with a thread's conclusion, {rows.Count(r => r.Diagnosis.Cause.ToName() == r.Thread)} agreeing"));
            foreach (var word in Enum.GetValues<DiagnosisConfidence>().Reverse())
            {
                var (said, right) = table.GetValueOrDefault(word);
                output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  {word,-7} {right,3} of {said,3} right{(said > 0 ? $" ({(double)right / said:P0})" : string.Empty)}"));
            }
        }

        foreach (var (id, thread, diagnosis) in heldOut.Where(r => r.Diagnosis.Cause.ToName() != r.Thread))
        {
            output.WriteLine($"held-out miss {id}: the thread says {thread}, MuxWatch {diagnosis.Cause.ToName()} ({diagnosis.Confidence})");
        }

        // The goal (issue 50) is "high" right 97 times in 100 on held-out messages. Measured round by round (docs/diagnosis.md):
        // the fifth round left 18 of 20 held-out (#1105 and #2339 wrong); they moved to the tuning part with the rules they
        // made (a write timeout dated by phys:, every call synchronous, a reply's size alone), and the sixth round's messages,
        // gathered after those rules, were read by the code unchanged: 19 of 19 held-out, 35 of 35 over both parts. The floors
        // are the goal itself: one wrong "high" among the held-out messages fails this test, and the next round must then move
        // the message that made a rule change to the tuning part, as above.
        var all = ByWord(tuning.Concat(heldOut));
        var high = all.GetValueOrDefault(DiagnosisConfidence.High);
        Assert.True(high.Right >= 0.97 * high.Said, $"high right {high.Right} of {high.Said}");
        var heldOutHigh = ByWord(heldOut).GetValueOrDefault(DiagnosisConfidence.High);
        Assert.True(heldOutHigh.Right >= 0.97 * heldOutHigh.Said, $"held-out: high right {heldOutHigh.Right} of {heldOutHigh.Said}");

        // The words are ordered: what "high" says is right at least as often as what "medium" says, and "medium" as "low".
        double Share(DiagnosisConfidence word) => all.GetValueOrDefault(word) is { Said: > 0 } figures ? (double)figures.Right / figures.Said : 1;
        Assert.True(Share(DiagnosisConfidence.High) >= Share(DiagnosisConfidence.Medium) - 0.05 && Share(DiagnosisConfidence.Medium) >= Share(DiagnosisConfidence.Low),
            $"high {Share(DiagnosisConfidence.High):P0}, medium {Share(DiagnosisConfidence.Medium):P0}, low {Share(DiagnosisConfidence.Low):P0}");
    }
}
