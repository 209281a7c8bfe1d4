using System.Diagnostics;
using System.Text.Json;

namespace MuxWatch.Testing;

/// <summary>
/// <c>dotnet-counters</c>, the .NET diagnostic tool a user points at a running app: test.sh installs it into
/// <c>artifacts/tools</c>; a test run by hand installs it there on first use.
/// </summary>
public static class DotnetCounters
{
    /// <summary>The version test.sh installs (the registry's).</summary>
    public const string Version = "10.0.750501";

    private static readonly string ToolPath = Path.Combine(BuiltProgram.RepositoryRoot, "artifacts", "tools");
    private static readonly SemaphoreSlim Installing = new(1, 1);

    /// <summary>
    /// Collects <paramref name="counters"/> from process <paramref name="processId"/> for <paramref name="duration"/>
    /// as <c>dotnet-counters collect --format json</c> writes them: each event's provider, name, tags and value.
    /// </summary>
    public static async Task<IReadOnlyList<JsonElement>> CollectAsync(int processId, string counters, TimeSpan duration)
    {
        var program = await InstalledAsync().ConfigureAwait(false);
        var output = Path.Combine(Path.GetTempPath(), $"muxwatch-counters-{Guid.NewGuid():N}.json");
        try
        {
            var info = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
            foreach (var argument in (string[])["collect", "--process-id", processId.ToString(System.Globalization.CultureInfo.InvariantCulture),
                "--counters", counters, "--format", "json", "--output", output, "--duration", duration.ToString(@"hh\:mm\:ss", System.Globalization.CultureInfo.InvariantCulture)])
            {
                info.ArgumentList.Add(argument);
            }

            var (exitCode, stdout, stderr) = await BuiltProgram.RunAsync(info, timeout: duration + TimeSpan.FromMinutes(1)).ConfigureAwait(false);
            if (exitCode != 0 || !File.Exists(output))
            {
                throw new InvalidOperationException($"dotnet-counters collect failed ({exitCode}): {stdout}\n{stderr}");
            }

            using var document = JsonDocument.Parse(await File.ReadAllTextAsync(output).ConfigureAwait(false));
            return [.. document.RootElement.GetProperty("Events").EnumerateArray().Select(e => e.Clone())];
        }
        finally
        {
            File.Delete(output);
        }
    }

    private static async Task<string> InstalledAsync()
    {
        var program = Path.Combine(ToolPath, "dotnet-counters");
        await Installing.WaitAsync().ConfigureAwait(false);
        try
        {
            if (!File.Exists(program))
            {
                var info = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
                foreach (var argument in (string[])["tool", "install", "dotnet-counters", "--version", Version, "--tool-path", ToolPath])
                {
                    info.ArgumentList.Add(argument);
                }

                var (exitCode, stdout, stderr) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(5)).ConfigureAwait(false);
                if (exitCode != 0)
                {
                    throw new InvalidOperationException($"dotnet tool install dotnet-counters failed ({exitCode}): {stdout}\n{stderr}");
                }
            }

            return program;
        }
        finally
        {
            Installing.Release();
        }
    }
}
