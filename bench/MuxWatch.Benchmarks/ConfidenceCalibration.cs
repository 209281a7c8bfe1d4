using System.Globalization;
using MuxWatch.Diagnosis;
using MuxWatch.Model;
using MuxWatch.Reading;
using MuxWatch.Testing;

namespace MuxWatch.Benchmarks;

/// <summary>
/// What each confidence word is worth, measured over the project's corpus split the way the held-out principle asks
/// (issue 50): the rules were written from <c>public-reports.json</c> (the tuning part) and are measured on
/// <c>held-out-reports.json</c> (public messages gathered after them, read by the code unchanged). Prints, per part and
/// word, how often the answer agreed with the thread's conclusion, with the lower end of its 95% Wilson interval: twenty
/// right of twenty is 100% measured but only "at least 84%" shown, which is what a goal like "97 in 100" must be read against.
/// </summary>
internal static class ConfidenceCalibration
{
    /// <summary>confidence [CORPUS-DIRECTORY]: the table docs/diagnosis.md quotes ("What the confidence words mean").</summary>
    public static int Run(string[] args)
    {
        var directory = args.Length > 0 ? args[0] : Path.Combine(AppContext.BaseDirectory, "Corpus");
        var tuning = Read(Path.Combine(directory, "public-reports.json"));
        var heldOut = Read(Path.Combine(directory, "held-out-reports.json"));
        Print("tuning part (the rules were written from it)", tuning);
        Print("held-out part (gathered after the rules, read by the code unchanged)", heldOut);
        Print("both parts", [.. tuning, .. heldOut]);
        foreach (var (id, thread, diagnosis) in heldOut.Where(row => row.Diagnosis.Cause.ToName() != row.Thread))
        {
            Console.WriteLine($"held-out miss {id}: the thread says {thread}, MuxWatch {diagnosis.Cause.ToName()} ({diagnosis.Confidence.ToString().ToLowerInvariant()})");
        }

        return 0;
    }

    private static List<(string Id, string Thread, TimeoutDiagnosis Diagnosis)> Read(string path) =>
        [.. ConcludedReports.Read(path).Select(r => (r.Id, r.Thread, TimeoutDiagnoser.Diagnose(TimeoutMessageReader.Read(r.Message))))];

    private static void Print(string title, List<(string Id, string Thread, TimeoutDiagnosis Diagnosis)> rows)
    {
        Console.WriteLine($"{title}: {rows.Count} messages with a thread's conclusion");
        foreach (var word in (DiagnosisConfidence[])[DiagnosisConfidence.High, DiagnosisConfidence.Medium, DiagnosisConfidence.Low])
        {
            var said = rows.Where(row => row.Diagnosis.Confidence == word).ToList();
            var right = said.Count(row => row.Diagnosis.Cause.ToName() == row.Thread);
            Console.WriteLine(said.Count == 0
                ? $"  {word.ToString().ToLowerInvariant(),-7} none said"
                : string.Create(CultureInfo.InvariantCulture, $"  {word.ToString().ToLowerInvariant(),-7} {right,3} of {said.Count,3} right ({100.0 * right / said.Count:F0}%; 95% lower bound {100 * WilsonLowerBound(right, said.Count):F0}%)"));
        }
    }

    /// <summary>
    /// The lower end of the Wilson score interval at 95% (z = 1.96): what a share measured on few answers shows at least.
    /// Written here: one formula, and no statistics package is among the project's dependencies for a benchmark to print it.
    /// </summary>
    internal static double WilsonLowerBound(int right, int said)
    {
        const double Z = 1.96;
        var share = (double)right / said;
        var spread = Z * Math.Sqrt(share * (1 - share) / said + Z * Z / (4.0 * said * said));
        return (share + Z * Z / (2.0 * said) - spread) / (1 + Z * Z / said);
    }
}
