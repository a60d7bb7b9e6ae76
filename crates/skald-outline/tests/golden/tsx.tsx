import React from "react";
interface Props { title: string }
export function Header({ title }: Props) {
  return <h1>{title}</h1>;
}
export const Footer = () => <footer />;
class Legacy extends React.Component<Props> {
  render() { return <div />; }
}
