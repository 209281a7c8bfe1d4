namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// Defects of the client that time commands out, by the versions that have them and the one that fixed them,
/// each with its source (the client's release notes and the maintainers' answers), and the symptom in a
/// message that points at it. A small table kept by hand: no library records which client builds had which bug.
/// </summary>
internal static class ClientDefects
{
    /// <summary>The known defects.</summary>
    public static IReadOnlyList<ClientDefect> All { get; } =
    [
        new(
            new Version(2, 0, 495),
            new Version(2, 0, 588),
            "an intermittent stall in the write lock that timed commands out even at low, concurrent load",
            "the client's release notes for 2.0.588; the maintainers' answers in issues #1129 and #1105",
            // Nothing awaits a reply: with the write lock stalled, commands never reach the socket, whether they
            // wait in the queue (qu above 0, "could not be written to the output buffer", issue #1105) or not.
            report => report.Number("qs") is 0,
            "nothing awaited a reply (qs: 0): the command never reached the socket"),
    ];

    /// <summary>The defect of the version <paramref name="version"/> (the message's <c>v:</c>) whose symptom the message shows, if any.</summary>
    public static ClientDefect? Of(string? version, Model.RedisErrorReport report)
    {
        if (version is null || !TryParse(version, out var parsed))
        {
            return null;
        }

        return All.FirstOrDefault(defect => parsed >= defect.From && parsed < defect.FixedIn && defect.Symptom(report));
    }

    /// <summary>The first three parts of a client version (<c>2.0.571.20511</c> is 2.0.571): the fourth is a build number.</summary>
    private static bool TryParse(string text, out Version version)
    {
        var parts = text.Split('.', 4);
        version = new Version();
        if (parts.Length < 3 || !int.TryParse(parts[0], out var major) || !int.TryParse(parts[1], out var minor) || !int.TryParse(parts[2], out var build))
        {
            return false;
        }

        version = new Version(major, minor, build);
        return true;
    }
}

/// <summary>One defect of the client.</summary>
/// <param name="From">The first version that has it.</param>
/// <param name="FixedIn">The version that fixed it.</param>
/// <param name="What">What it did.</param>
/// <param name="Source">Where that is written.</param>
/// <param name="Symptom">Whether a message shows its symptom.</param>
/// <param name="SymptomText">The symptom, as evidence.</param>
internal sealed record ClientDefect(Version From, Version FixedIn, string What, string Source, Func<Model.RedisErrorReport, bool> Symptom, string SymptomText);
