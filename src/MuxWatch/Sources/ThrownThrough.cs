using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;

namespace MuxWatch.Sources;

/// <summary>The namespaces an exception was thrown through, read from its stack trace (<see cref="Pipeline.TimeoutObservation.ThrownThrough"/>).</summary>
internal static class ThrownThrough
{
    /// <summary>How many distinct namespaces are kept: the innermost ones, where the library that made the call is.</summary>
    public const int MaxNamespaces = 16;

    /// <summary>
    /// The namespaces of <paramref name="exception"/>'s frames so far, innermost first. An awaited exception carries
    /// the frames it was rethrown through (the library's async method that awaited the client); a synchronous one
    /// those it unwound through before the catcher's queue was read, usually all of them up to its handler.
    /// </summary>
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "A frame without its method (trimmed, Native AOT) is skipped.")]
    public static IReadOnlyList<string> Of(Exception exception)
    {
        var namespaces = new List<string>(capacity: 8);
        foreach (var frame in new StackTrace(exception, fNeedFileInfo: false).GetFrames())
        {
            if (frame.GetMethod()?.DeclaringType?.Namespace is { } name && !namespaces.Contains(name))
            {
                namespaces.Add(name);
                if (namespaces.Count == MaxNamespaces)
                {
                    break;
                }
            }
        }

        return namespaces;
    }
}
