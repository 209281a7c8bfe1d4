using System.Globalization;
using MuxWatch.Json;
using MuxWatch.Model;
using MuxWatch.StackExchangeRedis;

namespace MuxWatch.Service.Commands;

/// <summary>
/// <c>doctor</c>: connects once to one Redis server, read-only, and prints what stalls its clients or is about to,
/// each finding with its one line of advice (<see cref="MuxWatchDoctor"/>); with <c>--json</c>, the same as one
/// document. For the person at a terminal, without Prometheus.
/// </summary>
internal static class DoctorCommand
{
    /// <summary>The environment variable a password may come from, kept off the command line (which <c>ps</c> shows).</summary>
    public const string PasswordVariable = "MUXWATCH_PASSWORD";

    public static async Task<int> RunAsync(string connectionString, string? passwordFile, string? trustedCaFile, TimeSpan timeout, bool json, TextWriter output, TextWriter error)
    {
        var target = new TargetOptions { Name = "doctor", ConnectionString = connectionString, PasswordFile = passwordFile, TrustedCaFile = trustedCaFile };
        if (passwordFile is null && Environment.GetEnvironmentVariable(PasswordVariable) is { Length: > 0 } password)
        {
            target.ConnectionString = $"{connectionString},password={password}";
        }

        DoctorReport report;
        try
        {
            report = await MuxWatchDoctor.ExamineAsync(target, timeout).ConfigureAwait(false);
        }
        catch (ArgumentException ex)
        {
            await error.WriteLineAsync($"doctor: the connection string cannot be used: {ex.Message}").ConfigureAwait(false);
            return CommandLine.BadUsage;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            await error.WriteLineAsync($"doctor: {(passwordFile is not null ? "--password-file or " : string.Empty)}--trusted-ca-file cannot be read: {ex.Message}").ConfigureAwait(false);
            return CommandLine.BadUsage;
        }

        if (json)
        {
            await output.WriteLineAsync(MuxWatchJson.Serialize(report)).ConfigureAwait(false);
        }
        else
        {
            await WriteTextAsync(report, output).ConfigureAwait(false);
        }

        return report.Connected ? CommandLine.Read : CommandLine.NothingToRead;
    }

    private static async Task WriteTextAsync(DoctorReport report, TextWriter output)
    {
        var warnings = report.Findings.Count(f => f.Warning);
        await output.WriteLineAsync(report.Connected
            ? string.Create(CultureInfo.InvariantCulture, $"muxwatch doctor: {report.Endpoint}: {warnings} warning{(warnings == 1 ? string.Empty : "s")}, {report.Findings.Count - warnings} more finding{(report.Findings.Count - warnings == 1 ? string.Empty : "s")}")
            : $"muxwatch doctor: {report.Endpoint}: could not connect").ConfigureAwait(false);
        foreach (var finding in report.Findings)
        {
            await output.WriteLineAsync($"{(finding.Warning ? "warning" : "ok"),-8}{finding.Topic,-16}{finding.Text}").ConfigureAwait(false);
            if (finding.Advice is { } advice)
            {
                await output.WriteLineAsync($"{string.Empty,-24}→ {advice}").ConfigureAwait(false);
            }
        }

        if (report.Unread.Count > 0)
        {
            await output.WriteLineAsync("could not read:").ConfigureAwait(false);
            foreach (var unread in report.Unread)
            {
                await output.WriteLineAsync($"  {unread}").ConfigureAwait(false);
            }
        }
    }
}
