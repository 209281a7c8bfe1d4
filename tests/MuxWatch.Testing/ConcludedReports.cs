using System.Text.Json;

namespace MuxWatch.Testing;

/// <summary>
/// The rows of a corpus part (<c>Corpus/public-reports.json</c>, <c>Corpus/held-out-reports.json</c>) whose thread reached
/// a cause: what the confidence calibration, its test and its benchmark, measure MuxWatch against.
/// </summary>
public static class ConcludedReports
{
    /// <summary>The rows of <paramref name="path"/> with a thread's conclusion (<c>thread</c> a string), in file order.</summary>
    public static IReadOnlyList<ConcludedReport> Read(string path)
    {
        using var document = JsonDocument.Parse(File.ReadAllText(path));
        return [.. document.RootElement.EnumerateArray()
            .Where(row => row.GetProperty("thread").ValueKind == JsonValueKind.String)
            .Select(row => new ConcludedReport(
                row.GetProperty("id").GetString()!,
                row.GetProperty("source").GetString()!,
                row.GetProperty("thread").GetString()!,
                row.GetProperty("message").GetString()!))];
    }
}

/// <summary>One public message and the cause its thread concluded.</summary>
/// <param name="Id">The row's id (<c>se-2339</c>).</param>
/// <param name="Source">Where the message and the conclusion are (the thread's address).</param>
/// <param name="Thread">The cause the thread concluded, in MuxWatch's names.</param>
/// <param name="Message">The message as pasted.</param>
public sealed record ConcludedReport(string Id, string Source, string Thread, string Message);
