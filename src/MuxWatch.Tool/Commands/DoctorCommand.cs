using System.Globalization;
using MuxWatch.Json;
using MuxWatch.Model;
using MuxWatch.StackExchangeRedis;

namespace MuxWatch.Tool.Commands;

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
        SidecarHosting.GuardConnections();
        var target = new TargetOptions { Name = "doctor", ConnectionString = connectionString, PasswordFile = passwordFile, TrustedCaFile = trustedCaFile };

        // The password goes to the client's options as it is (MuxWatchDoctor), never into the connection string: a
        // comma in it would begin another setting, or another server to send it to.
        var password = passwordFile is null && Environment.GetEnvironmentVariable(PasswordVariable) is { Length: > 0 } fromEnvironment ? fromEnvironment : null;
        DoctorReport report;
        try
        {
            report = await MuxWatchDoctor.ExamineAsync(target, password, timeout).ConfigureAwait(false);
        }
        catch (ArgumentException ex)
        {
            var why = Shown(ex.Message.Replace($" (Parameter '{ex.ParamName}')", string.Empty, StringComparison.Ordinal));
            var what = ex.ParamName switch
            {
                nameof(TargetOptions.PasswordFile) => $"--password-file cannot be used ({why}): {Shown(passwordFile)}",
                nameof(TargetOptions.TrustedCaFile) => $"--trusted-ca-file is not a readable certificate, PEM or DER ({why}): {Shown(trustedCaFile)}",
                _ => $"the connection string cannot be used: {why}",
            };
            await error.WriteLineAsync($"doctor: {what}").ConfigureAwait(false);
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

    /// <summary>
    /// What goes to the terminal, from a server or a user: one line, no control or formatting character (an escape
    /// sequence or a carriage return in a server's value would rewrite what the terminal shows, a fake "ok" over a
    /// warning), bounded. The findings are cleaned where they are made; this is the last guard before a terminal.
    /// </summary>
    internal static string Shown(string? text, int max = 1000)
    {
        if (string.IsNullOrEmpty(text))
        {
            return string.Empty;
        }

        var shown = new System.Text.StringBuilder(Math.Min(text.Length, max) + 1);
        foreach (var c in text.AsSpan(0, Math.Min(text.Length, max)))
        {
            shown.Append(char.IsControl(c) || CharUnicodeInfo.GetUnicodeCategory(c) == UnicodeCategory.Format ? '?' : c);
        }

        return text.Length > max ? shown.Append('…').ToString() : shown.ToString();
    }

    private static async Task WriteTextAsync(DoctorReport report, TextWriter output)
    {
        var warnings = report.Findings.Count(f => f.Warning);
        await output.WriteLineAsync(report.Connected
            ? string.Create(CultureInfo.InvariantCulture, $"muxwatch doctor: {Shown(report.Endpoint)}: {warnings} warning{(warnings == 1 ? string.Empty : "s")}, {report.Findings.Count - warnings} more finding{(report.Findings.Count - warnings == 1 ? string.Empty : "s")}")
            : $"muxwatch doctor: {Shown(report.Endpoint)}: could not connect").ConfigureAwait(false);
        foreach (var finding in report.Findings)
        {
            await output.WriteLineAsync($"{(finding.Warning ? "warning" : "ok"),-8}{Shown(finding.Topic),-16}{Shown(finding.Text)}").ConfigureAwait(false);
            if (finding.Advice is { } advice)
            {
                await output.WriteLineAsync($"{string.Empty,-24}→ {Shown(advice)}").ConfigureAwait(false);
            }
        }

        if (report.Unread.Count > 0)
        {
            await output.WriteLineAsync("could not read:").ConfigureAwait(false);
            foreach (var unread in report.Unread)
            {
                await output.WriteLineAsync($"  {Shown(unread)}").ConfigureAwait(false);
            }
        }
    }
}
